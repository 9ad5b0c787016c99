-- The decider's kind is a constraint of the store (docs/security.md, "Who decides"): a
-- decision names a member ("member:…", the member and delegate rules are read by the
-- store's code in the same transaction) or an orchestrator Agent of its project. A CHECK
-- cannot read the agents table, so these triggers hold it for every INSERT and UPDATE,
-- whoever writes the row: a raw statement naming a plain Agent, an Agent of another
-- project or an Agent that does not exist is refused. The prefix is compared exactly
-- (SQLite's LIKE ignores case). The message begins "invalid:", which the store reads as a
-- record it cannot keep (store.ErrInvalid), not as a conflict. Rows written before this
-- migration are not checked here; docket events verify compares them with the log.
CREATE TRIGGER decisions_decider_kind_insert BEFORE INSERT ON decisions
WHEN substr(NEW.decided_by, 1, 7) <> 'member:' AND NOT EXISTS (
	SELECT 1 FROM agents a
	WHERE a.project = NEW.project AND 'agent:' || a.id = NEW.decided_by AND a.kind = 'orchestrator')
BEGIN SELECT RAISE(ABORT, 'invalid: a decision''s decider is a member or an orchestrator Agent of its project'); END;

CREATE TRIGGER decisions_decider_kind_update BEFORE UPDATE ON decisions
WHEN substr(NEW.decided_by, 1, 7) <> 'member:' AND NOT EXISTS (
	SELECT 1 FROM agents a
	WHERE a.project = NEW.project AND 'agent:' || a.id = NEW.decided_by AND a.kind = 'orchestrator')
BEGIN SELECT RAISE(ABORT, 'invalid: a decision''s decider is a member or an orchestrator Agent of its project'); END;

-- An Agent that decided keeps its kind: turning an orchestrator into a plain Agent would
-- make its decisions ones a plain Agent made.
CREATE TRIGGER agents_decider_kind BEFORE UPDATE OF kind ON agents
WHEN NEW.kind <> 'orchestrator' AND EXISTS (
	SELECT 1 FROM decisions d WHERE d.project = OLD.project AND d.decided_by = 'agent:' || OLD.id)
BEGIN SELECT RAISE(ABORT, 'invalid: an Agent that decided a request stays an orchestrator'); END;
