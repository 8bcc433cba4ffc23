//! stdio, guarded. rmcp drops a line it cannot read (invalid UTF-8, not JSON, past its cap)
//! without a word, so the client waits forever for that id, and answers some malformed messages
//! without `"id": null`. Between the process's stdin/stdout and rmcp this module
//! - reads lines of at most `max_line` bytes (the rest of a longer line is skipped, never
//!   buffered) and answers every line that is not one well-formed JSON-RPC message itself, with
//!   the same codes as HTTP (`-32700` / `-32600` with `"id": null`, `-32602` with the id for a
//!   malformed `tools/call`), then goes on with the next line;
//! - writes whole lines to stdout, rmcp's and its own never interleaved;
//! - ends the session when stdout is closed (rmcp then stops instead of failing each write).

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::wire::jsonrpc::inspect;

/// Bytes buffered between rmcp and the guard, each way.
const PIPE: usize = 64 * 1024;

/// rmcp's side of the guarded stdio: what it reads and where it writes, and a token cancelled
/// when stdout is closed (the session must end then). The guard runs on tasks until stdin ends
/// or stdout closes.
pub(crate) fn guarded(
    stdin: impl AsyncRead + Unpin + Send + 'static,
    stdout: impl AsyncWrite + Unpin + Send + 'static,
    max_line: usize,
) -> Guarded {
    let (for_rmcp, to_rmcp) = tokio::io::duplex(PIPE);
    let (from_rmcp, rmcp_writes) = tokio::io::duplex(PIPE);
    let (answers, answered) = mpsc::channel::<Vec<u8>>(64);
    let stdout_closed = CancellationToken::new();
    tokio::spawn(read_lines(stdin, to_rmcp, answers, max_line));
    let written = tokio::spawn(write_lines(from_rmcp, answered, stdout, stdout_closed.clone()));
    Guarded { rmcp: (for_rmcp, rmcp_writes), stdout_closed, written }
}

/// The guarded stdio.
pub(crate) struct Guarded {
    /// rmcp's transport: what it reads, where it writes.
    pub(crate) rmcp: (DuplexStream, DuplexStream),
    /// Cancelled when stdout is closed: the session must end.
    pub(crate) stdout_closed: CancellationToken,
    /// Done once everything rmcp wrote is on stdout (after rmcp's side is dropped): await it
    /// before the process exits, or its last answer (an `initialize` refusal) is lost.
    pub(crate) written: tokio::task::JoinHandle<()>,
}

/// The error line for a refused message.
fn error_line(code: i32, message: &str, id: serde_json::Value) -> Vec<u8> {
    let error = serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
    let mut line = error.to_string().into_bytes();
    line.push(b'\n');
    line
}

async fn read_lines(
    stdin: impl AsyncRead + Unpin,
    mut to_rmcp: DuplexStream,
    answers: mpsc::Sender<Vec<u8>>,
    max_line: usize,
) {
    let mut stdin = BufReader::new(stdin);
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = match stdin.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(chunk) => chunk,
        };
        let (taken, ended) = match chunk.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            let piece = &chunk[..taken - usize::from(ended)];
            if line.len() + piece.len() > max_line {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(piece);
            }
        }
        stdin.consume(taken);
        if !ended {
            continue;
        }
        let answer = if too_long {
            Some(error_line(
                -32700,
                &format!("Parse error: a line is at most {max_line} bytes"),
                serde_json::Value::Null,
            ))
        } else if line.iter().all(u8::is_ascii_whitespace) {
            None
        } else {
            match inspect(&line) {
                Err((code, message, id)) => Some(error_line(code, &message, id)),
                Ok(_) => {
                    line.push(b'\n');
                    if to_rmcp.write_all(&line).await.is_err() {
                        break;
                    }
                    None
                }
            }
        };
        if let Some(answer) = answer {
            if answers.send(answer).await.is_err() {
                break;
            }
        }
        line.clear();
        too_long = false;
    }
    // stdin ended: rmcp sees the end of its input and finishes the session.
    let _ = to_rmcp.shutdown().await;
}

async fn write_lines(
    from_rmcp: DuplexStream,
    mut answered: mpsc::Receiver<Vec<u8>>,
    mut stdout: impl AsyncWrite + Unpin,
    stdout_closed: CancellationToken,
) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut answers_open = true;
    loop {
        let out = tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line) => match read {
                // rmcp is done (and all it wrote is out): so is the session.
                Ok(0) | Err(_) => break,
                Ok(_) => std::mem::take(&mut line),
            },
            answer = answered.recv(), if answers_open => match answer {
                Some(answer) => answer,
                // stdin ended: what rmcp still writes goes out until it is done.
                None => { answers_open = false; continue; }
            },
        };
        if stdout.write_all(&out).await.is_err() || stdout.flush().await.is_err() {
            tracing::debug!("stdout is closed; ending the stdio session");
            stdout_closed.cancel();
            break;
        }
    }
}
