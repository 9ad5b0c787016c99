-- Schedules (issue 13): a member's cron expression or interval, in a zone, that creates a
-- task for an Agent at each fire; task is the task each fire posts (contract.TaskRequest
-- as JSON, which the store does not read). next_due is the next due time the sweep fires; it moves
-- only forward, and only by a writer that read it (a compare-and-set), so two instances
-- never both fire one due time.
CREATE TABLE schedules (
	id           TEXT    PRIMARY KEY,
	project      TEXT    NOT NULL REFERENCES projects (id),
	agent        TEXT    NOT NULL REFERENCES agents (id),
	cron         TEXT    NOT NULL,
	every_ns     BIGINT NOT NULL CHECK (every_ns >= 0),
	time_zone    TEXT    NOT NULL,
	missed       TEXT    NOT NULL CHECK (missed IN ('skip', 'run_once')),
	task         BYTEA    NOT NULL,
	created_by   TEXT    NOT NULL CHECK (created_by <> ''),
	created_at   BIGINT NOT NULL,
	paused_at    BIGINT,
	deleted_at   BIGINT,
	next_due     BIGINT NOT NULL,
	CHECK ((cron = '') <> (every_ns = 0))
);
CREATE INDEX schedules_project ON schedules (project);
CREATE INDEX schedules_due ON schedules (next_due) WHERE paused_at IS NULL AND deleted_at IS NULL;

-- One row per fire, keyed by its due time: the idempotent key that keeps a fire from
-- being made twice, across restarts and instances.
CREATE TABLE schedule_fires (
	schedule   TEXT    NOT NULL REFERENCES schedules (id),
	due_at     BIGINT NOT NULL,
	project    TEXT    NOT NULL REFERENCES projects (id),
	kind       TEXT    NOT NULL CHECK (kind IN ('due', 'catch_up', 'run_now')),
	fired_at   BIGINT NOT NULL,
	task       TEXT    NOT NULL,
	outcome    TEXT    NOT NULL CHECK (outcome <> ''),
	error_code TEXT    NOT NULL,
	teaching   TEXT    NOT NULL,
	PRIMARY KEY (schedule, due_at)
);
CREATE INDEX schedule_fires_open ON schedule_fires (fired_at) WHERE outcome IN ('posting', 'posted');
