-- Requests a decision references (issue 14): a decision must name a recorded Request by
-- its digest and requester, so a row with another digest, or for a request never made,
-- is refused by the store whatever its caller checked. The decider must be named as a
-- member or an Agent (which kind of Agent is checked by the store's code). Requests
-- decided before this migration are recorded from their decisions; a Request still
-- pending at the upgrade has no row and cannot be decided — it expires and is settled.
CREATE TABLE requests (
	project      TEXT    NOT NULL REFERENCES projects (id),
	id           TEXT    NOT NULL,
	digest       TEXT    NOT NULL CHECK (digest <> ''),
	requested_by TEXT    NOT NULL CHECK (requested_by <> ''),
	at           BIGINT  NOT NULL,
	PRIMARY KEY (project, id),
	UNIQUE (project, id, digest, requested_by)
);

INSERT INTO requests (project, id, digest, requested_by, at)
	SELECT project, request, digest, requested_by, at FROM decisions;

ALTER TABLE decisions
	ADD CONSTRAINT decisions_request FOREIGN KEY (project, request, digest, requested_by)
		REFERENCES requests (project, id, digest, requested_by),
	ADD CONSTRAINT decisions_decider CHECK (decided_by LIKE 'member:_%' OR decided_by LIKE 'agent:_%');
