//! Helpers shared by the integration tests.

use std::path::PathBuf;

use docshelf_server::config::{EngineConfig, ModelConfig};
use docshelf_server::embed::DeviceChoice;

/// The real model, as `make setup` installs it (or `DOCSHELF_MODEL_DIR`).
pub fn model_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    match std::env::var_os("DOCSHELF_MODEL_DIR").map(PathBuf::from) {
        Some(p) if p.is_relative() => root.join(p),
        Some(p) => p,
        None => root.join("models/all-MiniLM-L6-v2"),
    }
}

/// The shared test data (`../shared` beside the repository).
pub fn shared_data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

/// An engine configuration on a fresh store with the real model on the CPU.
pub fn engine_config(store: &std::path::Path) -> EngineConfig {
    EngineConfig {
        data: store.display().to_string(),
        model: ModelConfig {
            model_dir: model_dir(),
            device: DeviceChoice::Cpu,
        },
        max_files: 1000,
        max_expanded_mib: 64,
    }
}

/// Serves docshelf's router on a free loopback port (for the rest of the
/// test's runtime) and returns its base URL.
pub async fn serve(engine: &EngineConfig, router: docshelf_server::http::RouterConfig) -> String {
    let engine = std::sync::Arc::new(
        docshelf_server::engine::Engine::open(engine)
            .await
            .expect("engine opens"),
    );
    let app = docshelf_server::http::router(engine, &router);
    let listener = tokio::net::TcpListener::bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// Posts an upload form to `/api/upload` (with `token` as a bearer token
/// when given), asserts it was accepted (202), and returns the job id.
pub async fn post_upload(
    client: &reqwest::Client,
    base: &str,
    form: reqwest::multipart::Form,
    token: Option<&str>,
) -> String {
    let mut request = client.post(format!("{base}/api/upload")).multipart(form);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let res = request.send().await.expect("upload");
    assert_eq!(res.status(), reqwest::StatusCode::ACCEPTED);
    res.json::<serde_json::Value>().await.expect("json")["job_id"]
        .as_str()
        .expect("job id")
        .to_owned()
}
