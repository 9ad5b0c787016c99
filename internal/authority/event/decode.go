package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// FormatVersion is the version of the payload formats of the catalog as a whole. It
// moves when a payload's stored bytes change shape (a field added, renamed, retyped or
// dropped, a type added to the catalog), and each version says here what it changed.
// Events already in a data dir are never rewritten: a payload type keeps decoding every
// shape any earlier version stored, and its golden file under testdata holds that shape.
//
// History:
//
//	1: the payloads as the authority stored them when they were first given one type
//	   each in this package; every golden file under testdata holds these bytes.
//	2: task.claimed may carry wait, what the run waited on when its runtime renewed the
//	   claim (task.claimed@2.json); a version 1 claim has none and decodes unchanged.
//	3: request.created and request.changed may carry taskBy, who wrote the tasks of the
//	   conversation whose call raised the request (request.created@10.json).
//	4: hook.reported's outcome may carry withdrawn, why the hook did not run a call that
//	   was allowed (hook.reported@2.json); a hook Operation's recorded input may carry
//	   pathNeedsMember and protected, what the hook found where the path lands.
//	5: worker.runtime_reported, the state of the worker docket start runs for a
//	   Connection (worker.runtime_reported.json); a runtime's state may be crash_loop.
//	6: case.held and case.released, a Case paused by a hold and a hold released
//	   (case.held.json, case.released.json); a Case record (case.opened, board.recorded)
//	   may carry holds and holdSeq.
//	7: task.cancel_requested, a member's cancel of a task (task.cancel_requested.json);
//	   task.reported may carry state cancelled with operations, the Operations the
//	   task's runs admitted (task.reported@3.json); task.claimed is unchanged.
//	8: budget.set, budget.warned and budget.exhausted, the budgets the authority holds
//	   (budget.set.json); task.reported's waits may name a budget (task.reported@4.json).
//	9: conversation.compacted, older turns of a conversation its runtime replaced by a
//	   summary (conversation.compacted.json); artifact.issued may carry expiresAt, when
//	   ReadArtifact stops reading it (artifact.issued@2.json); a version 5 artifact has
//	   none and is read for as long as the log keeps it. agent.profile_set may carry
//	   contextWindow, the model's context window in tokens (agent.profile_set@4.json).
//	10: task.claimed's wait may be in phase retry, the back-off before a model request is
//	   sent again, with attempt, attempts and reason (task.claimed@3.json); the turns of a
//	   saved conversation may carry retries, and its assistant messages reasoning;
//	   agent.profile_set may carry thinking, modelAttempts, modelRetryWaitSeconds,
//	   modelFirstByteSeconds and modelIdleSeconds
//	   (agent.profile_set@5.json).
//	11: agent.profile_set may carry workspace, the directory whose instruction files and
//	   skills the Agent's model is given (agent.profile_set@6.json).
//	12: tool.locked may carry the lock's approval, who locked it and when, and the
//	   descriptor the worker advertised (tool.locked@2.json); tool.unlocked and
//	   tool.approval_set (tool.unlocked.json, tool.approval_set.json), both changing the
//	   built-in release of direct Actions, as tool.locked now does.
//	13: task.posted may carry parent, the task, Agent, Operation and depth of the
//	   docket.ask that posted it (task.posted@3.json); an Operation may be at stage asked,
//	   waiting for the task it asked for (operation.admitted@16.json).
//	14: notice.delivered and notice.failed, a notice sent to a member's webhook or
//	   e-mail, or given up (notice.delivered.json, notice.failed.json).
//	15: material.added and material.disclosure_set, a file's metadata handed to an Agent
//	   and whether its content may go to the Agent's model provider (material.added.json,
//	   material.disclosure_set.json).
//	16: blueprint.set and blueprint.removed, a member's named template of Agent profiles
//	   (blueprint.set.json, blueprint.removed.json); agent.profile_set may carry allow,
//	   the Case Types and Actions the Agent may use, and blueprint, the blueprint it was
//	   copied from (agent.profile_set@7.json).
//	17: budget.removed, a member's removal of a budget with the version and limits it
//	   had (budget.removed.json).
const FormatVersion = 17

// ErrUnknownType is wrapped by [Decode] for a type the catalog does not list.
var ErrUnknownType = errors.New("event type not in the catalog")

var payloads = func() map[string]reflect.Type {
	m := make(map[string]reflect.Type, len(Catalog))
	for _, k := range Catalog {
		m[k.Type] = reflect.TypeOf(k.Payload)
	}
	return m
}()

// Decode turns the stored data of an event of type typ into its payload, whose dynamic
// type is the catalog's payload type of typ (a value, never a pointer).
//
// The log is the authority's own, written by json.Marshal of these types, so Decode is
// encoding/json's: a field this version does not know is ignored rather than refused, so
// that an event a later version appended still reads here. Outside input is decoded
// strictly (contract's decoders); the log is not outside input.
func Decode(typ string, data []byte) (Payload, error) {
	t, ok := payloads[typ]
	if !ok {
		return nil, fmt.Errorf("decode %q: %w", typ, ErrUnknownType)
	}
	v := reflect.New(t)
	if err := json.Unmarshal(data, v.Interface()); err != nil {
		return nil, fmt.Errorf("decode %s event: %w", typ, err)
	}
	return v.Elem().Interface().(Payload), nil
}
