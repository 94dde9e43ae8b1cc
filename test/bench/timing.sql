--
-- test/bench/timing.sql: the helpers antijoin.sql and join.sql time their
-- queries with, created in the schema first on the search_path (each script
-- sets it to its own schema around \ir timing.sql).
--

-- Apply settings given as name, value, name, value... for the rest of the
-- transaction (the scripts commit after every run, which ends them).
CREATE FUNCTION apply(settings text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. coalesce(array_length(settings, 1), 0) BY 2 LOOP
        PERFORM set_config(settings[i], settings[i + 1], true);
    END LOOP;
END
$$;

-- Nanoseconds this backend has spent on a CPU (the first field of
-- /proc/self/schedstat), or NULL where that cannot be read (not Linux, or
-- a user without pg_read_server_files).  On a machine shared with other
-- jobs the wall-clock time of a query is mostly its wait for a CPU; this
-- is not.
CREATE FUNCTION cpu_ns() RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    RETURN split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint;
EXCEPTION WHEN OTHERS THEN
    RETURN NULL;
END
$$;
