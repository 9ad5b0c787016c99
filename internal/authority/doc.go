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
//  1. a project's Board lock (boards: its Board State's lock in boards'
//     [eventlog.Driver], Cache.lock), taken by the write sequence
//     ([boards.Cache.Write]) or a read of the Board ([boards.Cache.Read]);
//  2. the project's log ([eventlog.Log], Authority.projectLog): one lock and one cursor
//     for every part that joins it — the operation ledger (the Operations, Requests,
//     artifacts, setup and the hop's claims, reports and lease generations, with the
//     calls held on them kept beside it), the policy Book, the task ledger (tasks, wakes,
//     pins), the conversation index, the profiles, the materials and the held
//     credentials' log of credential events. A call holding one part's State reads
//     another's through it ([eventlog.Along]: a decision reads the policy in force
//     through the ledger it holds, [policy.Book.InForceAlong], and an approved ask its
//     asking task, [task.Keeper.AskOpen]), never through that part's own Lock or Read,
//     which would wait for the lock the call holds;
//  3. inside the store transaction, the rows it locks: a Connection's lease rows
//     ([store.Tx.LockLeasesHead], which reads the log's head after them, or
//     [store.Tx.LockLeases]) before the log's head ([store.Tx.LockHead]).
//
// An admission and every hop call that writes take 2 and 3 in one function of package
// operation (commitLocked, docs/architecture.md "One commit function"), an admission
// skipping the lease row.
//
// A call may skip a level but not reorder them: a claim or a lease acquisition, which
// never changes the Board, takes 2 and 3 and leaves the Board lock free; a held call
// waiting for its outcome takes only 2, and only between waits. The guards of the maps
// that hand out these per-project values (boards.Cache.mu, Operations.mu, Dispatcher.mu)
// are held only to find or create an entry and never while taking another lock, as is
// the guard of the Views a published Board holds (boards: Published.mu); the
// count of who follows a project's log ([eventlog.Driver.Follow]) is taken alone or
// under 2, never around another lock, and the goroutine that follows the log takes 2
// only between its waits on the store. A Connection's claim and report batches
// (operation: batchQueue) are led before 1: the call leading a batch takes the locks
// above for the whole batch, and a call waiting in one holds none. A task write takes 2,
// then the head in its store transaction, and a task-ledger holder takes neither 1 nor
// another lock of 2 (a budget's room it reads from the store, a pin's check of the
// Board it makes before). Inside a transaction no call waits for a part's lock, since
// its holder may be waiting for that transaction's head: an approved ask's check of its
// asking task reads the task ledger through the operation ledger the write holds. Only
// a caller holding nothing that checks an ask inside a transaction of its own waits for
// the task ledger a bounded time and, finding it still held, runs its write again
// ([eventlog.Driver.LockWithin], [eventlog.ErrBusy]).
// A write of any part of 2 other than the ledger (a policy's publication, a
// conversation's save, a profile's change, a material's disclosure) takes 2 and then 3,
// holding nothing before, as does a round of the held credentials (identity:
// holds.roundMu, which nothing takes under 2); a material's addition takes 1, then 2
// inside its Board write, then 3, since its Board write's transaction appends its event
// ([materials.Keeper.Add]), as an admission does. A read that holds nothing and is made
// on every call — an Agent token's proof reading the credential events
// ([identity.Directory.AgentAt]), an Agent's QueryBoard and strip reading the ledger, a
// read of the policies in force — answers from the part's published State when its seq
// covers the head the read made ([eventlog.Driver.Snapshot]), so it does not wait for a
// claim batch or an admission holding 2 across its transaction; only a published State
// behind that head makes it take 2. Member reads of the conversations, profiles and
// materials take 2 while they catch up.
//
// Store transactions run inside these locks, so an instance serializes its own writes of
// a project in memory and the store serializes writers across instances: a write that
// finds the log moved on by another instance is run again by the write sequence.
package authority
