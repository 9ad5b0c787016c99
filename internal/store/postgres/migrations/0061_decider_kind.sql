-- The decider's kind is a constraint of the store (docs/security.md, "Who decides"): a
-- decision names a member ("member:…", the member and delegate rules are read by the
-- store's code in the same transaction) or an orchestrator Agent of its project. A CHECK
-- may not read another table, so a trigger holds it for every INSERT and UPDATE, whoever
-- writes the row: a raw statement naming a plain Agent, an Agent of another project or an
-- Agent that does not exist is refused with a check violation (store.ErrInvalid). Rows
-- written before this migration are not checked here; docket events verify compares them
-- with the log.
CREATE FUNCTION docket_decider_kind() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF left(NEW.decided_by, 7) <> 'member:' AND NOT EXISTS (
		SELECT 1 FROM agents a
		WHERE a.project = NEW.project AND 'agent:' || a.id = NEW.decided_by AND a.kind = 'orchestrator') THEN
		RAISE EXCEPTION 'a decision''s decider is a member or an orchestrator Agent of its project, not %', NEW.decided_by
			USING ERRCODE = 'check_violation';
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER decisions_decider_kind BEFORE INSERT OR UPDATE ON decisions
	FOR EACH ROW EXECUTE FUNCTION docket_decider_kind();

-- An Agent that decided keeps its kind: turning an orchestrator into a plain Agent would
-- make its decisions ones a plain Agent made.
CREATE FUNCTION docket_decider_stays() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.kind <> 'orchestrator' AND EXISTS (
		SELECT 1 FROM decisions d WHERE d.project = OLD.project AND d.decided_by = 'agent:' || OLD.id) THEN
		RAISE EXCEPTION 'agent % decided a request and stays an orchestrator', OLD.id USING ERRCODE = 'check_violation';
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER agents_decider_kind BEFORE UPDATE OF kind ON agents
	FOR EACH ROW EXECUTE FUNCTION docket_decider_stays();
