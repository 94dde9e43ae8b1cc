--
-- bloom_oversize: a text literal longer than the text form of the largest
-- filter is refused by its length alone, before anything is allocated for
-- it or decoded.  The largest filter's payload is 800,000,124 bytes (124 of
-- header, 800,000,000 of bits), whose base64 is 1,066,666,832 characters;
-- a literal of 1,068,000,000 characters (1 GB of 'A', just under
-- PostgreSQL's limit on a value) would decode to 801,000,000 bytes, and is
-- refused with the detail that names its length (a literal that got decoded
-- would be refused later, for its header).  The cast copies the literal once
-- more, so this takes about 2 GB for a second or two.
--
SELECT repeat(repeat('A', 1068000), 1000)::bloom;
-- a length that is no multiple of 4 is refused the same way, whatever its size
SELECT 'AAAAA'::bloom;
-- and a literal of the right length but not a filter gets past the length
-- check, to the decoder and the validator
SELECT 'AAAA'::bloom;
