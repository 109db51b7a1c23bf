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
