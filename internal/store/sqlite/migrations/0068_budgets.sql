-- Budgets the authority holds (docs/budgets.md): a member's limit on model requests over
-- a project, an Agent or a schedule, per day, per month or in total, in tokens and in
-- millionths of a US dollar. budget_spend keeps what was charged in each window; a
-- budget_holds row is a part held for one model request between its reservation and its
-- charge. Every write of these tables is made under the project's head lock, so two
-- serves sharing the database check and hold the same remaining room one at a time.
CREATE TABLE budgets (
	project       TEXT    NOT NULL REFERENCES projects (id),
	name          TEXT    NOT NULL CHECK (name <> ''),
	scope         TEXT    NOT NULL CHECK (scope IN ('project', 'agent', 'schedule')),
	target        TEXT    NOT NULL,
	window_kind   TEXT    NOT NULL CHECK (window_kind IN ('day', 'month', 'total')),
	time_zone     TEXT    NOT NULL CHECK (time_zone <> ''),
	max_tokens    INTEGER NOT NULL CHECK (max_tokens >= 0),
	max_micro_usd INTEGER NOT NULL CHECK (max_micro_usd >= 0),
	warn_percent  INTEGER NOT NULL CHECK (warn_percent BETWEEN 1 AND 100),
	set_by        TEXT    NOT NULL CHECK (set_by <> ''),
	set_at        INTEGER NOT NULL,
	version       INTEGER NOT NULL CHECK (version >= 1),
	PRIMARY KEY (project, name),
	CHECK ((scope = 'project') = (target = ''))
) STRICT;

CREATE TABLE budget_spend (
	project         TEXT    NOT NULL,
	budget          TEXT    NOT NULL,
	window_start    INTEGER NOT NULL,
	tokens          INTEGER NOT NULL CHECK (tokens >= 0),
	micro_usd       INTEGER NOT NULL CHECK (micro_usd >= 0),
	unpriced_tokens INTEGER NOT NULL CHECK (unpriced_tokens >= 0),
	warned          INTEGER NOT NULL CHECK (warned IN (0, 1)),
	exhausted       INTEGER NOT NULL CHECK (exhausted IN (0, 1)),
	PRIMARY KEY (project, budget, window_start),
	FOREIGN KEY (project, budget) REFERENCES budgets (project, name)
) STRICT;

CREATE TABLE budget_holds (
	project      TEXT    NOT NULL,
	id           TEXT    NOT NULL CHECK (id <> ''),
	budget       TEXT    NOT NULL,
	window_start INTEGER NOT NULL,
	tokens       INTEGER NOT NULL CHECK (tokens >= 0),
	micro_usd    INTEGER NOT NULL CHECK (micro_usd >= 0),
	until_at     INTEGER NOT NULL,
	PRIMARY KEY (project, id, budget),
	FOREIGN KEY (project, budget) REFERENCES budgets (project, name)
) STRICT;
CREATE INDEX budget_holds_budget ON budget_holds (project, budget);
