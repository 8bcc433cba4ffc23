//! The harness's own start-up check: a server counts as listening only on a socket of its own,
//! not on one another process took from under it.

use trails_tests::launch::listens_itself;

#[test]
fn a_listening_socket_is_attributed_to_the_process_that_holds_it() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    assert!(listens_itself(std::process::id(), addr), "this process holds {addr}");
    let mut other = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let attributed = listens_itself(other.id(), addr);
    let _ = other.kill();
    let _ = other.wait();
    assert!(!attributed, "another process does not hold {addr}");
    drop(listener);
    assert!(!listens_itself(std::process::id(), addr), "nothing listens on {addr} any more");
}
