//! The `docshelf` command line as a user types it: the real binary, its
//! exit status and what it prints.

use std::process::Command;

use reqwest::StatusCode;

use crate::common::{self, ServerProcess};

/// `docshelf ingest` with a package spec the registry could never serve:
/// the REST API's reason, as bad input (exit 2), before any registry or
/// store is asked; never "--version is needed for files".
#[test]
fn an_invalid_package_spec_gets_the_apis_reason_not_a_files_complaint() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (spec, said) in [
        ("pypi:../../etc/passwd", "is not a pypi package name"),
        ("npm:", "no package name given"),
        (
            "crates:serde@../../x",
            "is not a version docshelf can ask crates for",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_docshelf"))
            .args(["ingest", "--library", "x", "--data"])
            .arg(dir.path())
            .arg("--model-dir")
            .arg(common::model_dir())
            .arg(spec)
            .output()
            .expect("docshelf runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spec}: {stderr}");
        assert!(stderr.contains(said), "{spec}: {stderr}");
        assert!(!stderr.contains("--version is needed"), "{spec}: {stderr}");
    }
}

/// On/off settings from the environment take the usual spellings: the
/// server starts with them, and they take effect (`1` for
/// `--auth-reads` makes a read need the token).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switches_in_the_environment_take_1_yes_and_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = Command::new(env!("CARGO_BIN_EXE_docshelf"));
    command
        .env("DOCSHELF_ALLOW_PRIVATE_URLS", "1")
        .env("DOCSHELF_AUTH_READS", "yes")
        .env("DOCSHELF_OCR", "off")
        .env("DOCSHELF_TOKEN", "t0ken-for-the-test");
    let server = ServerProcess::start_with(command, dir.path(), &[]).await;
    let client = reqwest::Client::new();
    let res = client
        .get(format!("{}/api/libraries", server.base))
        .send()
        .await
        .expect("answered");
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let status: serde_json::Value = client
        .get(format!("{}/api/status", server.base))
        .bearer_auth("t0ken-for-the-test")
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    assert_eq!(status["ocr"]["enabled"], false, "{status}");
}

/// Looking for a GPU on a machine without a desktop session prints no
/// error: Mesa's Vulkan device-selection layer (installed with
/// `mesa-vulkan-drivers`, as `make setup` does) asks for a Wayland
/// compositor there, and libwayland said "error: XDG_RUNTIME_DIR is
/// invalid or not set" four times on every start.
#[test]
fn the_gpu_probe_prints_no_error_without_a_desktop_session() {
    let out = Command::new(env!("CARGO_BIN_EXE_docshelf"))
        .args(["embed", "--device", "auto", "--model-dir"])
        .arg(common::model_dir())
        .arg("a kestrel hovers")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("NODEVICE_SELECT")
        .output()
        .expect("docshelf runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
    assert!(!stderr.lines().any(|l| l.starts_with("error")), "{stderr}");
    let vector: Vec<f32> =
        serde_json::from_slice(out.stdout.trim_ascii()).expect("one JSON vector");
    assert_eq!(vector.len(), 384);
}

/// `docshelf token`: made on the store here (as its owner), listed without
/// its secret, then listed, refused and revoked on a running server with
/// `--server` and a token, whose refusals exit by their kind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_made_here_and_managed_on_a_server_with_its_admin_token() {
    let dir = tempfile::tempdir().expect("temp dir");
    let docshelf = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_docshelf"));
        command
            .args(args)
            .env_remove("DOCSHELF_SERVER")
            .env_remove("DOCSHELF_TOKEN");
        command
    };
    let data = dir.path().to_str().expect("utf-8 path");
    let made = docshelf(&[
        "token", "create", "agents", "--grant", "read:*", "--data", data,
    ])
    .output()
    .expect("runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let secret = String::from_utf8_lossy(&made.stdout).trim().to_owned();
    assert!(secret.starts_with("dsk_"), "{secret}");
    assert!(String::from_utf8_lossy(&made.stderr).contains("only time it is shown"));
    let listed = docshelf(&["token", "list", "--json", "--data", data])
        .output()
        .expect("runs");
    let list: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(list[0]["name"], "agents");
    assert!(!String::from_utf8_lossy(&listed.stdout).contains(&secret));
    let id = list[0]["id"].as_str().expect("id").to_owned();

    let mut command = Command::new(env!("CARGO_BIN_EXE_docshelf"));
    command.env("DOCSHELF_TOKEN", "admin-for-the-cli");
    let server = ServerProcess::start_with(command, dir.path(), &[]).await;
    // The token made here is honoured by the server on the same store.
    let res = reqwest::Client::new()
        .get(format!("{}/api/libraries", server.base))
        .bearer_auth(&secret)
        .send()
        .await
        .expect("answered");
    assert_eq!(res.status(), StatusCode::OK);
    // Reads against the server go through its check, with the token given.
    let listed = docshelf(&[
        "libraries",
        "--json",
        "--server",
        &server.base,
        "--token",
        &secret,
    ])
    .output()
    .expect("runs");
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "[]");
    let refused = docshelf(&[
        "libraries",
        "--server",
        &server.base,
        "--token",
        "dsk_wrong",
    ])
    .output()
    .expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("invalid_token"));
    // A read token may not list tokens: refused by the server, exit 2
    // (bad input and refusals alike), with its words.
    let refused = docshelf(&[
        "token",
        "list",
        "--server",
        &server.base,
        "--token",
        &secret,
    ])
    .output()
    .expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not_permitted"));
    let revoked = docshelf(&[
        "token",
        "revoke",
        &id,
        "--server",
        &server.base,
        "--token",
        "admin-for-the-cli",
    ])
    .output()
    .expect("runs");
    assert!(
        revoked.status.success(),
        "{}",
        String::from_utf8_lossy(&revoked.stderr)
    );
    let res = reqwest::Client::new()
        .get(format!("{}/api/status", server.base))
        .bearer_auth(&secret)
        .send()
        .await
        .expect("answered");
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}

/// `docshelf export` then `docshelf import` on another store: the version
/// arrives whole and searchable; a damaged file is refused as bad input
/// (exit 2) with the reason; a binary export is not written to a terminal
/// by accident (here stdout is a pipe, so `-o` is used).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_exported_here_imports_on_another_store() {
    let (from, to) = (
        tempfile::tempdir().expect("temp dir"),
        tempfile::tempdir().expect("temp dir"),
    );
    let engine = common::engine(from.path()).await;
    let status = common::run(
        &engine,
        "house",
        "3",
        vec![common::upload(
            "hinges.md",
            "# Hinges\n\nOil the quibbleflux hinges every spring.\n",
        )],
    )
    .await;
    assert_eq!(status.tally(), (1, 0));
    drop(engine);
    let file = from.path().join("house-3.docshelf");
    let docshelf = |args: &[&str], store: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_docshelf"))
            .args(args)
            .arg("--data")
            .arg(store)
            .arg("--model-dir")
            .arg(common::model_dir())
            .output()
            .expect("docshelf runs")
    };
    let out = docshelf(
        &["export", "house@3", "-o", file.to_str().expect("utf-8")],
        from.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let damaged = from.path().join("damaged.docshelf");
    let mut bytes = std::fs::read(&file).expect("export");
    bytes.truncate(bytes.len() - 100);
    std::fs::write(&damaged, bytes).expect("write");
    let out = docshelf(&["import", damaged.to_str().expect("utf-8")], to.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("damaged"), "{stderr}");

    let out = docshelf(&["import", file.to_str().expect("utf-8")], to.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("imported house@3: 1 documents"), "{stdout}");
    let out = docshelf(
        &["search", "quibbleflux hinges", "--library", "house"],
        to.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("hinges.md"), "{stdout}");
}
