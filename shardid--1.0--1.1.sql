/* shardid--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shardid UPDATE TO '1.1'" to load this file. \quit

--
-- The durable fence
--

--
-- End of the durable fence section
--

--
-- Statistics: visibility
--

--
-- End of the statistics section
--

--
-- Adopting existing tables
--

--
-- End of the adoption section
--

--
-- Provisioning logical shards (hardened)
--

--
-- End of the provisioning section
--

--
-- Time partitions
--

--
-- End of the time partitions section
--
