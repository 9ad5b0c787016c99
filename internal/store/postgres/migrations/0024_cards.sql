-- Cards (issue 15): a delegate's consent call recorded instead of run, until a member
-- confirms or declines it or it is voided. data is the card as the API shows it (JSON); the
-- other columns are what cards are selected by. A card closes once: only an open card
-- changes state.
CREATE TABLE cards (
	id         TEXT    PRIMARY KEY,
	project    TEXT    NOT NULL REFERENCES projects (id),
	delegate   TEXT    NOT NULL REFERENCES delegates (id),
	state      TEXT    NOT NULL CHECK (state IN ('open', 'confirmed', 'declined', 'void')),
	created_at BIGINT NOT NULL,
	data       BYTEA    NOT NULL
);
CREATE INDEX cards_project ON cards (project, state);
CREATE INDEX cards_delegate ON cards (delegate, state);
