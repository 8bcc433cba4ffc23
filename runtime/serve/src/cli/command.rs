//! The command line every Trails binary shares, parsed with `clap`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "A Trails MCP server", long_about = None)]
pub(crate) struct Cli {
    /// trails.toml to read (default: ./trails.toml when it exists; settings are also taken from
    /// TRAILS_* environment variables).
    #[arg(long, global = true, env = "TRAILS_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Serve MCP over stdio or Streamable HTTP (default: HTTP on 127.0.0.1:8080, path /mcp; stdio
    /// in a binary built without the `http` feature).
    Serve {
        /// Speak MCP on stdin/stdout (logs go to stderr).
        #[arg(long, conflicts_with = "http")]
        stdio: bool,
        /// Listen for Streamable HTTP on ADDR (default: `[http] bind`, itself 127.0.0.1:8080).
        #[arg(long, value_name = "ADDR", num_args = 0..=1)]
        http: Option<Option<SocketAddr>>,
    },
    /// Print the tool descriptors a caller with SCOPES would list.
    Tools {
        /// Comma-separated scopes (default: the process scopes).
        #[arg(long)]
        scopes: Option<String>,
    },
    /// Call a meta capability as the developer (every scope but what production hides) and print
    /// its result: the same text `tools/call` returns (`meta gen.shape '{"name": …}'`).
    Meta {
        /// The capability: `gen.shape`, or its full id `trails.meta.gen.shape`.
        capability: String,
        /// Its arguments, a JSON object (default `{}`).
        arguments: Option<String>,
    },
    /// Print the SHA-256 of a token, for `[[http.tokens]]` in trails.toml.
    HashToken {
        /// The token to hash.
        token: String,
    },
}
