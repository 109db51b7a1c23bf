//! A source's fetch as a job: pages go through the same pipeline as
//! uploads as they arrive, and the version is published whole at the end,
//! pages gone from the source removed in the same commit. Searches see
//! the version as it was before or as it is after, never between.
//!
//! Only what changed is read: a page the site answers `304 Not Modified`
//! for, or whose bytes hash as before, is kept as stored without being
//! extracted or embedded (and within a changed page, unchanged chunks
//! keep their vectors, see [`crate::ingest::pipeline`]).

use index_core::job::{FileState, JobState};
use index_core::source::RefreshSummary;
use ingest_core::docs_tree::DocsRoot;
use ingest_core::file_rules::only_project_files;
use ingest_core::ids::content_hash;
use tokio::sync::mpsc;

use super::api_pages;
use super::crawl::{self, Found, PageRecord, Plan};
use super::fetch::Fetcher;
use super::git::listing::TreeLimits;
use super::git::tree::DocsFetch;
use super::git::tree::FetchBounds;
use super::git::{self, GitError, GitPlan};
use super::package_route::{Chosen, PackageRoute};
use super::registry::{self, Release};
use super::tally::Tally;
use super::SourceState;
use crate::ingest::pipeline::{Input, JobRun, Pipeline, Read};
use crate::ingest::{JobHandle, MemoryBudget};
use crate::store::Replace;

/// What a job fetches.
pub enum Work {
    Site(Plan),
    Git(GitPlan),
    Package(Release, PackageRoute),
}

/// Runs the fetch of a source into `job`'s version. When the job
/// published, returns the source's new state and leaves the job
/// `indexing`: the caller stores the state, then ends the job with
/// [`crate::ingest::pipeline::finish_indexing`], so that a client told "done" finds the source
/// up to date. Otherwise the job has ended, and what is returned is how
/// the fetch went.
pub async fn run(
    pipeline: &Pipeline<'_>,
    job: &JobHandle,
    fetcher: &Fetcher,
    tree: TreeLimits,
    work: Work,
    previous: &SourceState,
) -> Result<SourceState, RefreshSummary> {
    let mut tally = Tally::default();
    let mut run = JobRun::new(pipeline, job);
    let trees = Trees {
        limits: tree,
        memory: pipeline.memory.clone(),
    };
    let leftovers = match work {
        Work::Site(plan) => site(&mut tally, &mut run, job, fetcher, plan, previous).await,
        Work::Git(plan) => repository(&mut tally, &mut run, job, plan, &trees, previous).await,
        Work::Package(release, route) => {
            let reach = Reach { fetcher, trees };
            package(
                &mut tally, &mut run, job, &reach, &release, &route, previous,
            )
            .await
        }
    };
    // Pages of the last fetch that were not met again are gone, if the
    // crawl saw everything; otherwise they were only not reached.
    for (address, record) in &previous.pages {
        if tally.pages.contains_key(address) || tally.removed.contains(address) {
            continue;
        }
        if leftovers == Leftovers::Replaced {
            break;
        }
        if leftovers == Leftovers::Removed {
            tally.removed.insert(address.clone());
            let reason = "no longer found at the source".to_owned();
            job.add_file(address, FileState::Removed { reason });
        } else {
            tally.keep.insert(address.clone());
            tally.pages.insert(address.clone(), record.clone());
        }
    }
    for note in &tally.notes {
        tracing::info!(job = job.id(), note);
        job.note(note);
    }
    if let Some(reason) = tally.verdict() {
        run.discard().await;
        job.stop(JobState::Failed, &reason, "not stored: the fetch failed");
        return Err(tally.summary(job));
    }
    if !run.finish_staging().await {
        return Err(tally.summary(job));
    }
    tally.keep_what_failed_to_read(job, previous);
    let published = run.publish(&Replace::Version { keep: &tally.keep }).await;
    if !published {
        return Err(tally.summary(job));
    }
    Ok(tally.state(job))
}

/// What bounds a repository's tree listing: its limits, and the memory
/// budget its paths are reserved from.
struct Trees {
    limits: TreeLimits,
    memory: MemoryBudget,
}

/// What a package's fetch reaches: its registry and sites over HTTP, a
/// repository through git.
struct Reach<'a> {
    fetcher: &'a Fetcher,
    trees: Trees,
}

/// What becomes of the pages of the last fetch that this one did not meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leftovers {
    /// The crawl saw everything: they are gone from the site.
    Removed,
    /// The crawl stopped at a bound: they were only not reached.
    Kept,
    /// A package's new archive replaces every document of the old one.
    Replaced,
}

/// Crawls a site, each page read as it arrives.
async fn site(
    tally: &mut Tally,
    run: &mut JobRun<'_, '_>,
    job: &JobHandle,
    fetcher: &Fetcher,
    plan: Plan,
    previous: &SourceState,
) -> Leftovers {
    let (tx, mut rx) = mpsc::channel(16);
    // Through a mirror, the crawl sees the mirror's addresses; the pages
    // are stored under their source's.
    let alias = plan.scope.alias().cloned();
    let seen_by_crawl: Option<crawl::Previous> = alias.as_ref().map(|alias| {
        previous
            .pages
            .iter()
            .map(|(address, record)| (alias.fetched(address), record.clone()))
            .collect()
    });
    let fetcher = match &plan.credential {
        Some(credential) => fetcher.with_credential(credential.clone()),
        None => fetcher.clone(),
    };
    let crawling = crawl::crawl(
        &fetcher,
        plan,
        seen_by_crawl.as_ref().unwrap_or(&previous.pages),
        tx,
    );
    let reading = async {
        while let Some(found) = rx.recv().await {
            let found = match &alias {
                Some(alias) => found.renamed(|address| alias.shown(address)),
                None => found,
            };
            tally.found(run, job, previous, found).await;
        }
    };
    let (outcome, ()) = tokio::join!(crawling, reading);
    tally.notes.extend(outcome.notes);
    if outcome.complete {
        Leftovers::Removed
    } else {
        Leftovers::Kept
    }
}

/// Fetches a repository's docs folder at one commit and reads each file
/// that changed since the last fetch (by content hash); the others are
/// kept as stored. What the tree no longer holds is removed, since the
/// listing is whole.
async fn repository(
    tally: &mut Tally,
    run: &mut JobRun<'_, '_>,
    job: &JobHandle,
    plan: GitPlan,
    trees: &Trees,
    previous: &SourceState,
) -> Leftovers {
    let fetched = fetch_tree(&plan, trees).await;
    read_tree(tally, run, job, &plan, fetched, previous).await
}

/// The docs of `plan`'s commit, fetched on a blocking thread; why not, in
/// words that name the repository as its source does.
async fn fetch_tree(plan: &GitPlan, trees: &Trees) -> Result<DocsFetch, TreeFailure> {
    let wall = plan
        .deadline
        .saturating_duration_since(tokio::time::Instant::now());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _stop_on_drop = crate::process::StopOnDrop(stop.clone());
    let fetched = {
        let stop = stop.clone();
        let (plan, tree, memory) = (plan.clone(), trees.limits, trees.memory.clone());
        tokio::task::spawn_blocking(move || {
            let bounds = FetchBounds {
                limits: &plan.limits,
                tree,
                memory: &memory,
                wall,
            };
            let folder = plan.docs_path.as_deref();
            let (remote, target) = (&plan.remote, &plan.target);
            git::tree::fetch_docs(
                remote,
                target,
                folder,
                plan.needs_folder,
                &plan.selection,
                bounds,
                &stop,
            )
        })
        .await
    };
    match fetched {
        Ok(Ok(docs)) => Ok(docs),
        Ok(Err(GitError::NoDocsFolder)) => Err(TreeFailure::NoDocsFolder),
        // Through a mirror, the message names the source's address.
        Ok(Err(err)) => Err(TreeFailure::Failed(
            err.to_string()
                .replace(plan.remote.url().as_str(), &plan.source_url),
        )),
        Err(err) => Err(TreeFailure::Failed(format!("the fetch stopped: {err}"))),
    }
}

/// Why a tree's docs were not fetched.
enum TreeFailure {
    /// A package's repository without a docs folder: its next route is
    /// taken ([`GitError::NoDocsFolder`]).
    NoDocsFolder,
    Failed(String),
}

/// Reads the files of a fetched tree, or fails the job with why the fetch
/// failed.
async fn read_tree(
    tally: &mut Tally,
    run: &mut JobRun<'_, '_>,
    job: &JobHandle,
    plan: &GitPlan,
    fetched: Result<DocsFetch, TreeFailure>,
    previous: &SourceState,
) -> Leftovers {
    let at = &plan.target.name;
    let docs = match fetched {
        Ok(docs) => docs,
        Err(failure) => {
            let why = match failure {
                TreeFailure::NoDocsFolder => GitError::NoDocsFolder.to_string(),
                TreeFailure::Failed(why) => why,
            };
            tally.fail(job, format!("{} @ {at}", plan.source_url), why);
            return Leftovers::Kept;
        }
    };
    let from = plan
        .origin
        .clone()
        .unwrap_or_else(|| format!("{} at {at}", plan.source_url));
    let place = match &docs.root {
        DocsRoot::Folder(_) => docs.root.place(),
        DocsRoot::TopLevel => "at the top of the tree, which has no docs folder".to_owned(),
    };
    tally.notes.push(format!(
        "documentation taken from {from}: {} files {place} ({} other files of the tree left out)",
        docs.files.len(),
        docs.left_out
    ));
    tally.notes.extend(docs.rules.notes());
    tally.notes.extend(docs.unusable.notes());
    if let Some(warning) = only_project_files(docs.files.iter().map(|f| f.path.as_str())) {
        tally.notes.push(warning);
    }
    job.expect(docs.files.len());
    for file in docs.files {
        let record = PageRecord {
            hash: content_hash(&file.bytes),
            ..PageRecord::default()
        };
        let unchanged = previous
            .pages
            .get(&file.path)
            .is_some_and(|r| r.hash == record.hash);
        let found = if unchanged {
            Found::Unchanged {
                address: file.path,
                record,
            }
        } else {
            Found::Page {
                address: file.path,
                format: file.format,
                bytes: file.bytes,
                record,
            }
        };
        tally.found(run, job, previous, found).await;
    }
    Leftovers::Removed
}

/// Downloads a release and reads its documentation, unless the archive is
/// the one read last time: from the repository its metadata names, at the
/// release's tag, else the documentation site it names, else from the
/// archive ([`PackageRoute`]).
async fn package(
    tally: &mut Tally,
    run: &mut JobRun<'_, '_>,
    job: &JobHandle,
    reach: &Reach<'_>,
    release: &Release,
    route: &PackageRoute,
    previous: &SourceState,
) -> Leftovers {
    let fetcher = reach.fetcher;
    let address = release.url.to_string();
    tally.archive = Some(address.clone());
    let bytes = match registry::download(fetcher, release).await {
        Ok(bytes) => bytes,
        Err(err) => {
            tally.fail(job, address, err.to_string());
            return Leftovers::Replaced;
        }
    };
    let record = PageRecord {
        hash: content_hash(&bytes),
        ..PageRecord::default()
    };
    let unchanged = previous
        .pages
        .get(&address)
        .is_some_and(|r| r.hash == record.hash);
    tally.pages.insert(address.clone(), record);
    if unchanged {
        tally.archive_unchanged(job, &address, previous);
        return Leftovers::Replaced;
    }
    let reference = api_pages::read(tally, &reach.trees.memory, release, route, &bytes).await;
    let mut chosen = route
        .choose(fetcher, release, &bytes, &mut tally.notes)
        .await;
    if let Chosen::Repository(plan) = chosen {
        // Listed first: a repository without a docs folder leaves the
        // next route to be taken.
        match fetch_tree(&plan, &reach.trees).await {
            Err(TreeFailure::NoDocsFolder) => {
                let origin = plan.origin.as_deref().unwrap_or(&plan.source_url);
                tally.notes.push(format!(
                    "the Git repository was not used: {origin}: {}, and the files at its top are not taken for documentation (from: repo reads them)",
                    GitError::NoDocsFolder
                ));
                chosen = route
                    .after_repository(fetcher, release, &bytes, &mut tally.notes)
                    .await;
            }
            fetched => {
                let leftovers = read_tree(tally, run, job, &plan, fetched, previous).await;
                api_pages::meet(tally, run, job, reference, previous).await;
                return leftovers;
            }
        }
    }
    match chosen {
        Chosen::Repository(plan) => {
            let leftovers = repository(tally, run, job, *plan, &reach.trees, previous).await;
            api_pages::meet(tally, run, job, reference, previous).await;
            return leftovers;
        }
        Chosen::Site(plan, origin) => {
            tally.notes.push(origin);
            let leftovers = site(tally, run, job, fetcher, *plan, previous).await;
            api_pages::meet(tally, run, job, reference, previous).await;
            return leftovers;
        }
        Chosen::Refused(why) => {
            tally.pages.remove(&address);
            tally.fail(job, address, why);
            return Leftovers::Replaced;
        }
        Chosen::Archive => {}
    }
    tally.changed += 1;
    let slot = job.add_file(&release.file_name, FileState::Queued);
    let input = Input {
        name: release.file_name.clone(),
        bytes,
        read: Read::PackageDocs(route.selection.clone()),
    };
    run.take(input, slot).await;
    tally.notes.extend(run.take_notes());
    // An archive refused whole (over the entry or size limits) stored
    // nothing: a failure, and not remembered as read, so that a refresh
    // tries it again rather than answering "unchanged".
    let refused = job.status().files.into_iter().find_map(|f| match f.state {
        FileState::Failed { reason } if f.file_path == release.file_name => Some(reason),
        _ => None,
    });
    if let Some(reason) = refused {
        tally.pages.remove(&address);
        tally.changed -= 1;
        tally.count_failure(release.file_name.clone(), reason);
        return Leftovers::Replaced;
    }
    // The archive's documents, staged or on their way (stored only when
    // the version publishes).
    let stored: Vec<String> = job
        .status()
        .files
        .into_iter()
        .filter(|f| {
            f.file_path != release.file_name
                && !matches!(
                    f.state,
                    FileState::Failed { .. }
                        | FileState::Skipped { .. }
                        | FileState::Removed { .. }
                )
        })
        .map(|f| f.file_path)
        .collect();
    if let Some(warning) = only_project_files(stored.iter().map(String::as_str)) {
        tally.notes.push(format!(
            "{warning} (the {} archive has no docs folder, and its repository was not read: the notes above say why)",
            release.registry
        ));
    }
    api_pages::meet(tally, run, job, reference, previous).await;
    Leftovers::Replaced
}
