//! The governance layer of Trails for Rust: guards on the call pipeline that enforce what a
//! capability declares. `policy_required` is decided by Cedar policies ([`policy`], the `cedar`
//! feature); `cost` is charged against per-caller budgets ([`budget`]) and `idempotent` calls
//! replay their first result for a repeated key ([`idempotency`]), both kept in a SQLite ledger
//! (`ledger`, the `ledger` feature) or, for several replicas, in Redis (`coordination`, the
//! `redis` feature). The records of calls that run as MCP tasks are kept there too ([`tasks`]). Each is a [`trails_core::pipeline::Guard`], composed by the
//! serving layer like any guard an app adds; this crate knows no transport and no store.
//!
//! Apps depend on the facade (`trails-mcp`), whose features of the same names turn these on.

pub mod budget;
#[cfg(feature = "redis")]
pub mod coordination;
pub mod idempotency;
#[cfg(feature = "ledger")]
pub mod ledger;
#[cfg(feature = "cedar")]
pub mod policy;
pub mod tasks;
