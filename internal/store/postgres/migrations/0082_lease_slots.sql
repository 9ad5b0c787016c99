-- Several workers per Connection: a Connection's leases are rows by slot, each its own
-- fenced lease (worker, generation, expiry). Generations still grow per Connection, across
-- all its slots, so a generation names one lease. Slot 0 always exists once a lease was
-- locked: every hop call locks it first, so it serializes a Connection's hop calls.
ALTER TABLE worker_leases ADD COLUMN slot INTEGER NOT NULL DEFAULT 0 CHECK (slot >= 0);
ALTER TABLE worker_leases DROP CONSTRAINT worker_leases_pkey;
ALTER TABLE worker_leases ADD PRIMARY KEY (connection, slot);
