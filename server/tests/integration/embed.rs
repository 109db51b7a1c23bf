//! The embedding engine against sentence-transformers' own output.
//!
//! `fixtures/minilm-reference.json` was produced by
//! `scripts/reference-embeddings.py` (sentence-transformers on PyTorch, CPU)
//! from the same weights `make setup` installs. These tests need those
//! weights: run them through `make test`, or set `DOCSHELF_MODEL_DIR`.

use crate::common;

use burn::backend::wgpu::graphics::{AutoGraphicsApi, GraphicsApi};
use burn::backend::wgpu::wgpu::Backend as GraphicsBackend;
use common::model_dir;
use docshelf_server::embed::{
    Backend, DeviceChoice, EmbedError, EmbedQueue, Embedder, Precision, DIM,
};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

fn load(choice: DeviceChoice) -> Embedder {
    let dir = model_dir();
    Embedder::load(&dir, choice).unwrap_or_else(|e| {
        panic!(
            "cannot load the model from {} ({e}); run `make setup`",
            dir.display()
        )
    })
}

fn reference() -> Reference {
    common::fixture("minilm-reference.json")
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// Embeds every reference text in one call (batched, padded, split across
/// cores on the CPU) and checks each against sentence-transformers.
fn assert_matches_reference(embedder: &Embedder) {
    let reference = reference();
    let got = embedder.embed(&reference.texts).expect("embeds");
    assert_close(embedder, &reference, &got, EXACT);
}

/// The cosine an f32 embedder must reach on every reference text: the same
/// numbers up to summation order.
const EXACT: f64 = 0.9999;

/// The same, one text per call: the path a search query takes (on the CPU,
/// short inputs split each projection across cores).
fn assert_matches_reference_one_by_one(embedder: &Embedder) {
    let reference = reference();
    let got: Vec<Vec<f32>> = reference
        .texts
        .iter()
        .map(|t| embedder.embed(&[t]).expect("embeds").remove(0))
        .collect();
    assert_close(embedder, &reference, &got, EXACT);
}

fn assert_close(embedder: &Embedder, reference: &Reference, got: &[Vec<f32>], floor: f64) {
    assert!(reference.texts.len() >= 24, "the fixture must stay varied");
    assert_eq!(got.len(), reference.texts.len());
    let mut worst = (f64::INFINITY, String::new());
    for ((text, want), got) in reference.texts.iter().zip(&reference.vectors).zip(got) {
        assert_eq!(got.len(), DIM);
        let norm: f64 = got
            .iter()
            .map(|x| f64::from(*x).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(
            (norm - 1.0).abs() < 1e-4,
            "not unit length ({norm}) for {text:?}"
        );
        let c = cosine(got, want);
        if c < worst.0 {
            worst = (c, text.chars().take(40).collect());
        }
    }
    let mean = reference
        .vectors
        .iter()
        .zip(got)
        .map(|(want, got)| cosine(got, want))
        .sum::<f64>()
        / got.len() as f64;
    eprintln!(
        "{}, {}: mean cosine {mean:.7}, worst {:.7} ({:?})",
        embedder.backend(),
        embedder.precision(),
        worst.0,
        worst.1
    );
    assert!(
        worst.0 >= floor,
        "{}: cosine {:.6} for {:?}",
        embedder.precision(),
        worst.0,
        worst.1
    );
}

/// bf16 and int8 change the numbers, not the meaning: every reference
/// text stays within a small angle of sentence-transformers' vector, in a
/// batch and alone (the query path). The floors sit under what was measured
/// (docs/benchmarks.md, "Reduced precision"; the worst texts are the empty
/// and blank ones, two or three tokens with nothing to average the error
/// over), and high enough that a wrong column, block or scale in a kernel
/// would fall below them.
#[test]
fn reduced_precisions_stay_close_to_sentence_transformers() {
    let reference = reference();
    for (precision, floor) in [(Precision::Bf16, 0.9995), (Precision::Int8, 0.99)] {
        let embedder = Embedder::load_with(&model_dir(), DeviceChoice::Cpu, precision)
            .expect("loads the model");
        assert_eq!(embedder.precision(), precision);
        let batched = embedder.embed(&reference.texts).expect("embeds");
        assert_close(&embedder, &reference, &batched, floor);
        let alone: Vec<Vec<f32>> = reference
            .texts
            .iter()
            .map(|t| embedder.embed(&[t]).expect("embeds").remove(0))
            .collect();
        assert_close(&embedder, &reference, &alone, floor);
    }
}

#[test]
fn cpu_backend_matches_sentence_transformers() {
    let embedder = load(DeviceChoice::Cpu);
    assert_matches_reference(&embedder);
    assert_matches_reference_one_by_one(&embedder);
}

/// The wgpu path on Vulkan: a hardware GPU where there is one, else Mesa's
/// software Vulkan driver, lavapipe, which Debian's `mesa-vulkan-drivers`
/// installs (scripts/setup.sh does), so CI runs it without a GPU. The
/// Vulkan loader finds lavapipe through its ICD file
/// (`/usr/share/vulkan/icd.d/lvp_icd.*.json`) with no variable set; to run
/// on lavapipe on a machine that has a GPU, point the loader at that file
/// alone (`VK_DRIVER_FILES`, or `VK_ICD_FILENAMES` before loader 1.3.234).
///
/// It fails, never skips, when wgpu finds no adapter, and when it finds
/// only OpenGL's software rasteriser (Mesa's llvmpipe through EGL, there
/// even without `mesa-vulkan-drivers`): either way lavapipe is missing, and
/// skipping or passing on OpenGL would let CI go green without this path.
#[test]
fn wgpu_backend_matches_sentence_transformers() {
    const INSTALL: &str = "install mesa-vulkan-drivers (Mesa's software Vulkan, lavapipe; \
        scripts/setup.sh does), or check that the Vulkan loader sees \
        /usr/share/vulkan/icd.d/lvp_icd.*.json";
    let embedder = match Embedder::load(&model_dir(), DeviceChoice::Gpu) {
        Ok(embedder) => embedder,
        Err(EmbedError::NoGpu(reason)) => panic!("wgpu found no adapter ({reason}): {INSTALL}"),
        Err(other) => panic!("wgpu load failed: {other}"),
    };
    // `--device gpu` never falls back to the CPU backend.
    assert!(
        matches!(embedder.backend(), Backend::Wgpu { .. }),
        "asked for wgpu, got {}",
        embedder.backend()
    );
    // The graphics API burn settles on for the default wgpu device, which
    // is the device `--device gpu` opens.
    if cfg!(target_os = "linux") {
        let api = AutoGraphicsApi::backend();
        assert_eq!(
            api,
            GraphicsBackend::Vulkan,
            "wgpu runs on {api:?} ({}), not Vulkan: {INSTALL}",
            embedder.backend()
        );
    }
    assert_matches_reference(&embedder);
}

#[test]
fn a_text_embeds_the_same_alone_and_beside_longer_ones() {
    let embedder = load(DeviceChoice::Cpu);
    let query = "how do I undo the last commit";
    let long = "A long neighbour forces padding in the batch. ".repeat(30);
    let alone = embedder.embed(&[query]).expect("embeds");
    let batched = embedder
        .embed_with_batch(&[long.as_str(), query, "x"], 3)
        .expect("embeds");
    assert!(cosine(&alone[0], &batched[1]) > 0.99999);
}

#[test]
fn missing_model_files_are_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    match Embedder::load(dir.path(), DeviceChoice::Cpu) {
        Err(EmbedError::MissingModelFiles { missing, .. }) => {
            assert!(missing.contains("model.safetensors"), "{missing}");
            assert!(missing.contains("tokenizer.json"), "{missing}");
        }
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("loaded a model from an empty directory"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_queries_coalesce_into_shared_batches() {
    let queue = EmbedQueue::start(load(DeviceChoice::Cpu)).expect("worker starts");
    let direct = load(DeviceChoice::Cpu);

    // Hold the query worker in a long pass (a text past the model's 256
    // word pieces) so the queries below are all waiting when it next
    // wakes. They are sent from one task: `join_all` sends all 16 on its
    // first poll. A spawned task each left their arrival to the scheduler,
    // and on a busy CI machine they straddled three passes.
    let blocker = {
        let queue = queue.clone();
        let long = "A long query to hold the worker in one pass. ".repeat(40);
        tokio::spawn(async move { queue.embed_one(long).await })
    };
    while queue.stats().query_passes == 0 {
        tokio::task::yield_now().await;
    }

    let queries: Vec<String> = (0..16).map(|i| format!("question number {i}")).collect();
    let answers = futures::future::join_all(queries.iter().map(|q| queue.embed_one(q.as_str())))
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .expect("embeds");
    blocker.await.expect("task").expect("embeds");

    let stats = queue.stats();
    assert_eq!(stats.requests, 17);
    // The blocker's pass, then one for the 16 (two should a send be
    // preempted across a pass); answered one by one they would take 16.
    assert!(
        stats.query_passes <= 3,
        "16 concurrent queries took {} passes after the first: they were not coalesced",
        stats.query_passes - 1
    );
    let expected = direct.embed(&queries).expect("embeds");
    for (got, want) in answers.iter().zip(&expected) {
        assert!(cosine(got, want) > 0.99999);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_is_answered_before_the_upload_it_arrived_behind() {
    let queue = EmbedQueue::start(load(DeviceChoice::Cpu)).expect("worker starts");
    // A long document: many slices of work.
    let upload = {
        let queue = queue.clone();
        let texts = vec!["A long paragraph of documentation to embed for a while. ".repeat(20); 96];
        tokio::spawn(async move { queue.embed_many(texts).await })
    };
    while queue.stats().passes == 0 {
        tokio::task::yield_now().await;
    }
    let vector = queue
        .embed_one("a search arriving mid-upload")
        .await
        .expect("embeds");
    assert_eq!(vector.len(), docshelf_server::embed::DIM);
    assert!(
        !upload.is_finished(),
        "the query waited for the whole upload instead of one slice of it"
    );
    let vectors = upload
        .await
        .expect("task")
        .expect("the upload still completes");
    assert_eq!(vectors.len(), 96);
}
