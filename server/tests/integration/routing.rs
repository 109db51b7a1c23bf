//! Replicas behind a real HAProxy that routes by library, with the
//! configuration docs/operations.md documents (examples/replicas/haproxy.cfg):
//! each library's searches go to one replica, so each replica holds only
//! its share of the libraries in memory.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::common::{self, run, upload};
use crate::s3_server::S3Server;
use docshelf_server::config::EngineConfig;
use docshelf_server::engine::Engine;

/// HAProxy run in the foreground, stopped when dropped.
struct Balancer(Child);

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The documented configuration with its listening address and replicas
/// replaced by this test's.
fn configuration(listen: u16, replicas: &[String]) -> String {
    let documented =
        std::fs::read_to_string(common::package_dir().join("../examples/replicas/haproxy.cfg"))
            .expect("examples/replicas/haproxy.cfg");
    let mut out = String::new();
    let mut servers_written = false;
    for line in documented.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("bind ") {
            out.push_str(&format!("    bind 127.0.0.1:{listen}\n"));
        } else if trimmed.starts_with("server ") {
            if !servers_written {
                for (i, base) in replicas.iter().enumerate() {
                    let address = base.trim_start_matches("http://");
                    out.push_str(&format!("    server r{i} {address} check inter 1s\n"));
                }
                servers_written = true;
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(
        servers_written,
        "the documented configuration lists its replicas"
    );
    out
}

fn start_haproxy(dir: &Path, config: &str) -> Balancer {
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, config).expect("write the configuration");
    let child = Command::new("haproxy")
        .arg("-db")
        .arg("-f")
        .arg(&path)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("haproxy runs (make setup installs it)");
    Balancer(child)
}

async fn held(base: &str) -> u64 {
    let (status, body) = common::get_json(base, "/api/status").await;
    assert!(status.is_success(), "{body}");
    body["store"]["memory"]["versions_held"]
        .as_u64()
        .expect("memory.versions_held")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_behind_haproxy_hold_only_the_libraries_routed_to_them() {
    const LIBRARIES: u64 = 12;
    let server = S3Server::start();
    let config = EngineConfig {
        read_consistency_secs: 0.5,
        ..server.engine_config("routed")
    };
    // The replicas start on an empty store (one that starts on a store
    // with libraries reads them all in while its budget allows)...
    let dir = tempfile::tempdir().expect("temp dir");
    let router = common::router_config(dir.path(), 1 << 20);
    let mut replicas = Vec::new();
    for _ in 0..2 {
        // What is asserted is where searches go, not how fast they are: a
        // search the store answers (on the S3 server, while the whole suite
        // loads this machine) may take longer than the default budget.
        let engine = Engine::open(&config)
            .await
            .expect("replica")
            .with_search_limits(
                docshelf_server::engine::MAX_CONCURRENT_SEARCHES,
                Duration::from_secs(300),
            );
        engine.warm().await;
        replicas.push(common::serve_engine(engine, &router).await);
    }
    // ...and the libraries are published by a process of its own (a
    // `docshelf ingest`): no replica holds one before it is searched.
    let writer = Engine::open(&config).await.expect("writer");
    for i in 0..LIBRARIES {
        let page = format!("# Page {i}\n\nThe zorblatt{i} setting tunes replica number {i}.\n");
        let status = run(
            &writer,
            &format!("lib{i:02}"),
            "1",
            vec![upload("page.md", page)],
        )
        .await;
        assert_eq!(status.tally(), (1, 0), "{status:#?}");
    }
    drop(writer);
    for base in &replicas {
        assert_eq!(held(base).await, 0, "nothing is held before a search");
    }
    let port = common::free_port();
    let _balancer = start_haproxy(dir.path(), &configuration(port, &replicas));
    let balancer = format!("http://127.0.0.1:{port}");
    common::wait_for(
        Duration::from_secs(30),
        Duration::from_millis(100),
        "HAProxy never answered",
        || async {
            reqwest::get(format!("{balancer}/healthz"))
                .await
                .is_ok_and(|r| r.status().is_success())
        },
    )
    .await;

    // Every library searched through the balancer until its replica
    // answers from memory: the first search reads the library in.
    for i in 0..LIBRARIES {
        let body =
            json!({"query": format!("zorblatt{i}"), "library": format!("lib{i:02}"), "k": 3});
        for _ in 0..3 {
            let (status, found) = common::post_json(&balancer, "/api/search", body.clone()).await;
            assert!(status.is_success(), "{found}");
            assert_eq!(found["results"][0]["file_path"], "page.md", "{found}");
        }
    }
    common::wait_for(
        Duration::from_secs(60),
        Duration::from_millis(200),
        "the replicas never held every library searched",
        || async {
            let mut total = 0;
            for base in &replicas {
                total += held(base).await;
            }
            total >= LIBRARIES
        },
    )
    .await;
    let shares = [held(&replicas[0]).await, held(&replicas[1]).await];
    assert_eq!(
        shares.iter().sum::<u64>(),
        LIBRARIES,
        "each library is held by one replica only: {shares:?}"
    );
    assert!(
        shares.iter().all(|&n| n > 0),
        "both replicas hold a share: {shares:?}"
    );
}
