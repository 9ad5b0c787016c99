// Package authority provides Docket's authority: the facade over its parts. The parts are
// packages under internal/authority:
//
//   - identity: members, sessions, passphrases, projects, Agents, Connections and their
//     keys, Sources and tool locks; a [identity.Caller] is what a credential proves.
//   - boards: each project's Board kept in step with the store and its log, the one
//     write sequence every Board write runs, and capability installs.
//   - operation: an Operation's whole life: the write gate, held calls, the strip,
//     Requests, decisions and artifacts, and the worker hop (leases, claims, reports,
//     reconciliation and the lease sweep), over the operation ledger (one projection of
//     the log, the hop's claims and reports included); admission and every hop call
//     commit through one function.
//   - policy: each project's published policies, versioned per kind from the built-in
//     version 1; the version in force that each decision records.
//   - conversation: Agents' conversations in the log, and their index.
//   - task: tasks and messages for Agents' conversations, the runtimes' leased claims,
//     reports, wakes, and each conversation's pin.
//   - schedule: members' schedules of tasks for Agents and the sweep that fires them,
//     posting each fire's task through this facade.
//   - event: the catalog of event types, with whether each may change a Board.
//   - eventlog: appending, the one catch-up loop ([eventlog.Cursor]) and the refusals
//     every part shares.
//
// This package wires them: [New] builds the identity directory, the Board cache and the
// conversation keeper over one store; [NewOperations] and [NewDispatcher] add the
// Operations and the worker hop over the same store and Boards. It re-exports none of
// their types and embeds none of them: its methods are those that need more than one
// part, and the parts it adds nothing to are handed out whole ([Authority.Directory],
// [Operations.Operations]) for callers to use through interfaces of their own.
//
// # Lock order
//
// A call takes the locks it needs in this order and never the other way round:
//
//  1. a project's lock: the one lock of the project's log ([eventlog.Log],
//     Authority.projectLog) that every part joins, with one cursor for all: the Board
//     (boards: its Board State, Cache.lock), the operation ledger (operation:
//     ledger.lock; the Operations, Requests, artifacts, setup and the hop's claims,
//     reports and lease generations, with the calls held on them kept beside it), the
//     policies, the task ledger (tasks, wakes, pins), the conversation index, the
//     profiles, the materials and the held credentials' log of credential events. The
//     write sequence ([boards.Cache.Write]) and a read of the Board
//     ([boards.Cache.Read]) take it as the Board's; a call of another part alone takes
//     it as that part's. A call that holds it through one part reads another part's
//     State through that hold ([eventlog.Along]: [boards.Write.Held] for the ledger
//     under a Board write, operation's ledger.lockAlong; the policies' InForceAlong,
//     AdmitAlong and DelegationNamesAlong under the ledger; an approved ask's asking
//     task, [task.Keeper.AskOpen]; a material's addition, [materials.Keeper.Add]) and
//     never locks again, since the lock is the one it holds;
//  2. inside the store transaction, the rows it locks: a Connection's lease rows
//     ([store.Tx.LockLeasesHead], which reads the log's head after them, or
//     [store.Tx.LockLeases]) before the log's head ([store.Tx.LockHead]).
//
// An admission and every hop call that writes take 1 and 2 in one function of package
// operation (commitLocked, docs/architecture.md "One commit function"), an admission
// skipping the lease row.
//
// A call may skip a level but not reorder them: a claim or a lease acquisition, which
// never changes the Board, takes 1 through the ledger and then 2; a held call waiting
// for its outcome takes only 1, and only between waits. Since the lock is one, a write of
// any part that holds it across its store transaction (a claim batch, a publication, a
// conversation's save) keeps the others' calls waiting: the reads that must not wait
// answer from what each part published when it covers the head they read — the ledger's
// snapshot (an Agent's QueryBoard and strip), the Board's published Views
// (boards.Published), the policies in force, the credential events an Agent token's
// proof reads ([identity.Directory.AgentAt]) and a conversation's pin
// ([task.Keeper.Pin]) — and take 1 only when it does not ([eventlog.Driver.Snapshot]).
// Member reads of the conversations, profiles and materials take 1 while they catch up.
// The guards of the maps that hand out these per-project values (boards.Cache.mu,
// Operations.mu, Dispatcher.mu) are held only to find or create an entry and never
// while taking another lock, as is the guard of the Views a published Board holds
// (boards: Published.mu); the count of who follows a project's log
// ([eventlog.Driver.Follow]) is taken alone or under 1, never around another lock, and
// the goroutine that follows the log takes 1 only between its waits on the store. A
// Connection's claim and report batches (operation: batchQueue) are led before 1: the
// call leading a batch takes the locks above for the whole batch, and a call waiting in
// one holds none. A round of the held credentials takes identity's holds.roundMu, then
// 1; nothing takes roundMu under 1. A task-ledger write checks a pin against the Board
// before it takes 1.
// Inside a transaction no call waits for a part's lock, since its holder may be waiting
// for that transaction's head: a call that holds 1 reads every part through it. Only a
// caller holding nothing that checks an ask inside a transaction of its own waits for 1
// a bounded time and, finding it still held, runs its write again
// ([eventlog.Driver.LockWithin], [eventlog.ErrBusy]).
//
// Store transactions run inside these locks, so an instance serializes its own writes of
// a project in memory and the store serializes writers across instances: a write that
// finds the log moved on by another instance is run again by the write sequence.
package authority
