//! The HTTP face, over a real socket: the router docshelf serves, bound to a
//! free loopback port, exercised with a real HTTP client.

use crate::common;

use docshelf_server::access::local;
use docshelf_server::config::{EngineConfig, ModelConfig};
use docshelf_server::embed::DeviceChoice;
use index_core::search::SearchParams;
use serde_json::Value;

struct TestServer {
    base: String,
    store: tempfile::TempDir,
}

/// A fresh store in `store`, and a model directory that does not exist.
fn without_model(store: &std::path::Path) -> EngineConfig {
    EngineConfig {
        max_files: 100,
        max_expanded_mib: 10,
        ..EngineConfig::new(
            store.display().to_string(),
            ModelConfig::new(store.join("no-model"), DeviceChoice::Cpu),
        )
    }
}

/// docshelf without its model on a fresh temporary store.
async fn start(max_body_bytes: usize) -> TestServer {
    let store = tempfile::tempdir().expect("temp dir");
    let base = common::serve(
        &without_model(store.path()),
        common::router_config(store.path(), max_body_bytes),
    )
    .await;
    TestServer { base, store }
}

#[tokio::test]
async fn healthz_answers_ok() {
    let server = start(1 << 20).await;
    let res = reqwest::get(format!("{}/healthz", server.base))
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.expect("body"), "ok");
}

#[tokio::test]
async fn status_reports_the_store_and_the_missing_model() {
    let server = start(1 << 20).await;
    let (status, json) = common::get_json(&server.base, "/api/status").await;
    assert_eq!(status, 200, "{json}");
    assert_eq!(json["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        json["store"]["location"],
        server.store.path().display().to_string()
    );
    assert_eq!(json["store"]["counts"]["chunks"], 0);
    assert_eq!(json["embedding"]["model"], "all-MiniLM-L6-v2");
    assert_eq!(json["embedding"]["loaded"], false);
    let error = json["embedding"]["error"].as_str().expect("error text");
    assert!(error.contains("model.safetensors"), "{error}");
}

#[tokio::test]
async fn the_dashboard_is_rendered_on_the_server_with_its_hydration_scripts() {
    let server = start(1 << 20).await;
    let res = reqwest::get(&server.base).await.expect("request");
    assert_eq!(res.status(), 200);
    let html = res.text().await.expect("body");
    assert!(html.contains("/pkg/app.js"), "{html}");
    assert!(html.contains("/pkg/app_bg"), "{html}");
    assert!(html.contains("aria-label=\"Query\""), "{html}");
    let status = reqwest::get(format!("{}/status", server.base))
        .await
        .expect("request")
        .text()
        .await
        .expect("body");
    assert!(status.contains("Check server"), "{status}");
}

#[tokio::test]
async fn the_status_server_function_answers_like_the_rest_endpoint() {
    let server = start(1 << 20).await;
    let res = reqwest::Client::new()
        .post(format!("{}/rpc/status", server.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    let json: Value = res.json().await.expect("json");
    assert_eq!(
        json["store"]["location"],
        server.store.path().display().to_string()
    );
}

#[tokio::test]
async fn unknown_paths_are_404() {
    let server = start(1 << 20).await;
    let res = reqwest::get(format!("{}/no/such/page", server.base))
        .await
        .expect("request");
    assert_eq!(res.status(), 404);
    // Under /api the 404 is the API's JSON, for any method.
    for method in [
        reqwest::Method::GET,
        reqwest::Method::POST,
        reqwest::Method::DELETE,
    ] {
        let res = reqwest::Client::new()
            .request(method.clone(), format!("{}/api/no/such/route", server.base))
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 404, "{method}");
        let body: Value = res.json().await.expect("json body");
        assert_eq!(body["code"], "unknown_route", "{method}");
        assert!(body["error"]
            .as_str()
            .is_some_and(|e| e.contains("/api/openapi.json")));
    }
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused_with_413() {
    let server = start(1024).await;
    let res = reqwest::Client::new()
        .post(format!("{}/rpc/status", server.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(vec![b'a'; 4096])
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 413);
}

/// Calls a dashboard server function with form-encoded arguments.
async fn rpc(server: &TestServer, name: &str, form: &str) -> (u16, Value) {
    let res = reqwest::Client::new()
        .post(format!("{}/rpc/{name}", server.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form.to_owned())
        .send()
        .await
        .expect("request");
    let status = res.status().as_u16();
    (status, res.json().await.expect("json body"))
}

#[tokio::test]
async fn server_functions_answer_errors_with_the_status_and_body_of_the_rest_api() {
    let server = start(1 << 20).await;

    // Arguments that do not decode are the caller's fault, not a 500.
    let (status, body) = rpc(&server, "document", "library=x").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["kind"], "bad_input");

    // The engine's own refusal: the same words and kind as REST's.
    let (status, body) = rpc(&server, "search", "params[query]=x&params[k]=99").await;
    assert_eq!(status, 400, "{body}");
    let rest = reqwest::Client::new()
        .post(format!("{}/api/search", server.base))
        .json(&serde_json::json!({"query": "x", "k": 99}))
        .send()
        .await
        .expect("request");
    assert_eq!(rest.status(), 400);
    let rest: Value = rest.json().await.expect("json");
    assert_eq!(body, rest);
    assert_eq!(rest["kind"], "bad_input");

    // Unknown things are 404 on both faces.
    let (status, body) = rpc(
        &server,
        "document",
        "library=nowhere&version=1.0&file_path=a.md",
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["code"], "unknown_library");
    let rest = reqwest::get(format!(
        "{}/api/documents?library=nowhere&version=1.0&file_path=a.md",
        server.base
    ))
    .await
    .expect("request");
    assert_eq!(rest.status(), 404);
    assert_eq!(rest.json::<Value>().await.expect("json"), body);
}

#[tokio::test]
async fn the_model_loads_only_when_something_needs_it() {
    let store = tempfile::tempdir().expect("temp dir");
    let engine = docshelf_server::engine::Engine::open(&without_model(store.path()))
        .await
        .expect("the engine opens without loading the model");
    // Listing and keyword search never ask for the model.
    assert!(engine
        .libraries(&local())
        .await
        .expect("libraries")
        .is_empty());
    let keyword = engine
        .search(&local(), common::keyword("anything"))
        .await
        .expect("keyword search needs no model");
    assert!(keyword.results.is_empty());
    let status = engine.status(&local()).await;
    assert!(!status.embedding.loaded);
    assert_eq!(status.embedding.error, None, "nothing tried to load it yet");

    // A dense search does, and the failure is remembered and reported.
    let err = engine
        .search(
            &local(),
            SearchParams {
                mode: Some("dense".into()),
                ..common::query("anything")
            },
        )
        .await
        .expect_err("no model to embed with");
    assert_eq!(err.kind(), index_core::ErrorKind::Unavailable);
    let error = engine
        .status(&local())
        .await
        .embedding
        .error
        .expect("the reason");
    assert!(error.contains("model.safetensors"), "{error}");
}
