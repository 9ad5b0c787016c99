-- Notices (docs/notices.md): a member's subscription to what needs them in a project, sent
-- by webhook or e-mail. target is the webhook URL or the address; a webhook URL may be a
-- credential, so it is kept here and nowhere else (never in an event).
CREATE TABLE notice_subscriptions (
	id         TEXT    PRIMARY KEY,
	project    TEXT    NOT NULL REFERENCES projects (id),
	member     TEXT    NOT NULL REFERENCES members (id),
	kinds      TEXT    NOT NULL CHECK (kinds <> ''),
	channel    TEXT    NOT NULL CHECK (channel IN ('webhook', 'email')),
	target     TEXT    NOT NULL CHECK (target <> ''),
	digest_ns  INTEGER NOT NULL CHECK (digest_ns >= 0),
	created_at INTEGER NOT NULL,
	deleted_at INTEGER,
	last_state TEXT    NOT NULL,
	last_at    INTEGER,
	last_error TEXT    NOT NULL
) STRICT;
CREATE INDEX notice_subscriptions_project ON notice_subscriptions (project, member);

-- How far each project's log has been read for notices: moved only from the value its
-- writer read (a compare-and-set), in the transaction that adds the notices, so two
-- instances never both make one event's notices.
CREATE TABLE notice_cursors (
	project TEXT    PRIMARY KEY REFERENCES projects (id),
	seq     INTEGER NOT NULL
) STRICT;

-- The outbox: one row per notice, claimed by one sender at a time (claimed_by until
-- claim_until), retried with back-off (due_at) until delivered or failed.
CREATE TABLE notices (
	id           TEXT    PRIMARY KEY,
	subscription TEXT    NOT NULL REFERENCES notice_subscriptions (id),
	project      TEXT    NOT NULL REFERENCES projects (id),
	kind         TEXT    NOT NULL,
	subject      TEXT    NOT NULL,
	body         BLOB    NOT NULL,
	created_at   INTEGER NOT NULL,
	due_at       INTEGER NOT NULL,
	attempts     INTEGER NOT NULL,
	state        TEXT    NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
	claimed_by   TEXT    NOT NULL,
	claim_until  INTEGER NOT NULL,
	settled_at   INTEGER,
	last_error   TEXT    NOT NULL
) STRICT;
CREATE INDEX notices_due ON notices (due_at) WHERE state = 'pending';
CREATE INDEX notices_subscription ON notices (subscription, created_at);
