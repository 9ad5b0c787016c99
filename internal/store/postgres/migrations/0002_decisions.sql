-- Decisions on Requests. The CHECK holds "no principal decides its own
-- request" even where the authority's own check is bypassed; the key, one decision per
-- request.
CREATE TABLE decisions (
	project      TEXT    NOT NULL REFERENCES projects (id),
	request      TEXT    NOT NULL,
	digest       TEXT    NOT NULL,
	requested_by TEXT    NOT NULL,
	decided_by   TEXT    NOT NULL,
	verdict      TEXT    NOT NULL CHECK (verdict IN ('approve', 'deny')),
	at           BIGINT  NOT NULL,
	PRIMARY KEY (project, request),
	CHECK (decided_by <> requested_by)
);
