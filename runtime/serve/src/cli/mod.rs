//! The application entry point every Trails binary shares: [`App`] (collect, configure, build)
//! and the `Server` it builds, plus `App::run`, which parses the command line and runs one of
//! its commands (`serve`, `tools`, `hash-token`).

mod app;
mod command;

pub use app::App;
