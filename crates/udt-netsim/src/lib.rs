//! `udt-netsim`: a seeded link model (placeholder until the link lands).
