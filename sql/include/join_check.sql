-- sql/include/join_check.sql: read by the join tests (\i, from the tree's
-- root, where pg_regress runs them).
--
-- join_check(q): the query's rows with bloomfilter.join_filter on and off,
-- and whether the node was used with it on; an error if the rows differ.
CREATE FUNCTION join_check(q text, OUT uses_filter bool, OUT nrows bigint)
LANGUAGE plpgsql AS $$
DECLARE
    plan text := '';
    line text;
    on_rows text[];
    off_rows text[];
BEGIN
    PERFORM set_config('bloomfilter.join_filter', 'on', true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        plan := plan || line || E'\n';
    END LOOP;
    uses_filter := plan ~ 'Bloom(Anti|Semi)Join';
    EXECUTE format('SELECT array_agg(t::text ORDER BY t::text) FROM (%s) t', q) INTO on_rows;
    PERFORM set_config('bloomfilter.join_filter', 'off', true);
    EXECUTE format('SELECT array_agg(t::text ORDER BY t::text) FROM (%s) t', q) INTO off_rows;
    PERFORM set_config('bloomfilter.join_filter', 'on', true);
    IF on_rows IS DISTINCT FROM off_rows THEN
        RAISE EXCEPTION 'rows differ with bloomfilter.join_filter: % against %', on_rows, off_rows;
    END IF;
    nrows := coalesce(cardinality(on_rows), 0);
END
$$;
