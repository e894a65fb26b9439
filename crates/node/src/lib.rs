//! fsgate-node: the napi-rs bindings of fsgate-core, and nothing else.
//!
//! Every heavy call parses its options, runs one core function on one of the addon's own
//! worker pools (reads, searches and disk-bound writes each have theirs, sized to the
//! machine and separate from libuv's pool that Node's fs calls share), and answers
//! through the module's one [`Completer`] with the request's id.
//! Failures answer too, as a [`NativeError`] with a stable `code` chosen in one place
//! ([`code_of`]), so no JavaScript ever parses a message. A panic in the core becomes an
//! `INTERNAL` error, never a crash of the host.
#![deny(clippy::all)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use fsgate_core as core;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

mod change;
mod list;
mod notebook;
mod patch;
mod process;
mod search;
pub use change::{
    ChangeChecks, EditFailureInfo, EditOptions, EditResult, LineCandidate, TargetResult, WriteOptions, WriteResult,
};
pub use list::{ListEntryInfo, ListOptions, ListResult};
pub use notebook::{
    NotebookCellInfo, NotebookEditOptions, NotebookEditResult, NotebookOptions, NotebookOutputInfo, NotebookResult,
};
pub use patch::{
    ApplyPatchOptions, CommitFileOptions, InsertOptions, OnDiskInfo, PatchFailureInfo, PatchFileResult, PatchOpInfo,
    PatchOpResult, PatchResult, PatchTargetOptions,
};
pub use process::{
    landlock_abi, native_spawn_available, set_host_dumpable, spawn_child, wait_child, ChildExit, ConfineOptions,
    SpawnOptions, SpawnedChild,
};
pub use search::{GlobOptions, GlobResult, GrepOptions, GrepResult, RankHitInfo, RankOptions, RankResult, WalkOptions};

/// The addon's worker pool: one thread per core, never the JS thread or libuv's pool.
static POOL: LazyLock<rayon::ThreadPool> = LazyLock::new(|| {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("fsgate-worker-{i}"))
        .build()
        .expect("the fsgate worker pool starts")
});

/// How many search pools there are: the TypeScript facade (ts/contract/fair.ts) hands
/// the addon at most this many searches at once (one for each of two sessions, one more
/// for a session with none running), so that each running search has a pool to itself.
const SEARCH_POOLS: usize = 3;

/// The pools for searches (globs, content searches, ranking), each of one thread per
/// core, apart from [`POOL`] and from one another. A search spawns tasks on its pool, and
/// rayon runs spawned tasks before it takes a new call, so on a shared pool a 5-line read
/// or a search of one small folder waited until every running search had finished; here
/// a call takes the pool with the fewest searches running and the system shares the cores.
static SEARCH: LazyLock<Vec<(rayon::ThreadPool, AtomicUsize)>> = LazyLock::new(|| {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
    (0..SEARCH_POOLS)
        .map(|p| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(move |i| format!("fsgate-search-{p}-{i}"))
                .build()
                .expect("the fsgate search pools start");
            (pool, AtomicUsize::new(0))
        })
        .collect()
});

/// The pool for work that waits on the disk (writes flushed with fsync): more threads
/// than cores, so that many conversations' writes wait for the disk together instead of
/// queueing behind one another and the compute pool stays free for reads and searches.
static IO_POOL: LazyLock<rayon::ThreadPool> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    rayon::ThreadPoolBuilder::new()
        .num_threads((cores * 4).clamp(4, 16))
        .thread_name(|i| format!("fsgate-io-{i}"))
        .build()
        .expect("the fsgate I/O pool starts")
});

/// Delivers finished work to JavaScript. One per loaded module (per JS environment):
/// every call names the request it answers, and all results arrive through this one
/// threadsafe function, so a call costs a queue push, not a promise bridge of its own.
#[napi]
pub struct Completer {
    done: DoneFn,
}

type DoneFn = Arc<ThreadsafeFunction<Done, (), FnArgs<(u32, AnyReply)>, Status, false, true>>;

/// A finished request.
pub struct Done {
    id: u32,
    reply: AnyReply,
}

/// The reply of any request.
#[allow(clippy::large_enum_variant)] // moved once, from a worker to the JS thread
pub enum AnyReply {
    /// From `Workspace.read`.
    Read(Reply<ReadResult>),
    /// From `countTokens`.
    Count(Reply<u32>),
    /// A string: from `hashFile`, `hashBuffer` and `Workspace.searchRoot`.
    Text(Reply<String>),
    /// From `Workspace.target`.
    Target(Reply<TargetResult>),
    /// From `Workspace.write` and `Workspace.remove`.
    Written(Reply<WriteResult>),
    /// From `Workspace.edit` and `Workspace.insert`.
    Edit(Reply<EditResult>),
    /// From `Workspace.parsePatch`, `Workspace.applyPatch` and `Workspace.commitFiles`.
    Patch(Reply<PatchResult>),
    /// From `Workspace.glob`.
    Glob(Reply<GlobResult>),
    /// From `Workspace.grep`.
    Grep(Reply<GrepResult>),
    /// From `Workspace.rank`.
    Rank(Reply<RankResult>),
    /// From `spawnChild`.
    Spawned(Reply<SpawnedChild>),
    /// From `waitChild`.
    Exited(Reply<ChildExit>),
    /// From `Workspace.readNotebook`.
    Notebook(Reply<NotebookResult>),
    /// From `Workspace.editNotebook`.
    NotebookEdit(Reply<NotebookEditResult>),
    /// From `Workspace.list`.
    Listing(Reply<ListResult>),
}

impl ToNapiValue for AnyReply {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
        match val {
            AnyReply::Read(r) => Reply::to_napi_value(env, r),
            AnyReply::Count(r) => Reply::to_napi_value(env, r),
            AnyReply::Text(r) => Reply::to_napi_value(env, r),
            AnyReply::Target(r) => Reply::to_napi_value(env, r),
            AnyReply::Written(r) => Reply::to_napi_value(env, r),
            AnyReply::Edit(r) => Reply::to_napi_value(env, r),
            AnyReply::Patch(r) => Reply::to_napi_value(env, r),
            AnyReply::Glob(r) => Reply::to_napi_value(env, r),
            AnyReply::Grep(r) => Reply::to_napi_value(env, r),
            AnyReply::Rank(r) => Reply::to_napi_value(env, r),
            AnyReply::Spawned(r) => Reply::to_napi_value(env, r),
            AnyReply::Exited(r) => Reply::to_napi_value(env, r),
            AnyReply::Notebook(r) => Reply::to_napi_value(env, r),
            AnyReply::NotebookEdit(r) => Reply::to_napi_value(env, r),
            AnyReply::Listing(r) => Reply::to_napi_value(env, r),
        }
    }
}

#[napi]
impl Completer {
    /// Creates the completer; `onDone(id, reply)` is called on the JS thread for each
    /// finished request. It does not keep the process alive by itself.
    #[napi(constructor)]
    pub fn new(
        #[napi(ts_arg_type = "(id: number, reply: { value?: any; error?: NativeError }) => void")] on_done: Function<
            FnArgs<(u32, AnyReply)>,
            (),
        >,
    ) -> Result<Completer> {
        let done = on_done
            .build_threadsafe_function::<Done>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(|ctx| Ok(FnArgs::from((ctx.value.id, ctx.value.reply))))?;
        Ok(Completer { done: Arc::new(done) })
    }
}

/// Runs `work` on the pool and sends its value or its error to the completer as `id`.
pub(crate) fn run_on_pool<T, F>(completer: &Completer, id: u32, wrap: fn(Reply<T>) -> AnyReply, work: F)
where
    T: Send + 'static,
    F: FnOnce() -> core::Result<T> + Send + 'static,
{
    run_on(&POOL, completer, id, wrap, work)
}

/// Like [`run_on_pool`], on the search pool with the fewest searches running: for walks
/// over folders, which spawn tasks of their own.
pub(crate) fn run_on_search_pool<T, F>(completer: &Completer, id: u32, wrap: fn(Reply<T>) -> AnyReply, work: F)
where
    T: Send + 'static,
    F: FnOnce() -> core::Result<T> + Send + 'static,
{
    let (at, (pool, _)) = SEARCH
        .iter()
        .enumerate()
        .min_by_key(|(_, (_, running))| running.load(Ordering::Relaxed))
        .expect("a search pool");
    SEARCH[at].1.fetch_add(1, Ordering::Relaxed);
    run_on(pool, completer, id, wrap, move || {
        let out = catch_unwind(AssertUnwindSafe(work));
        SEARCH[at].1.fetch_sub(1, Ordering::Relaxed);
        out.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Like [`run_on_pool`], on the I/O pool: for work that spends its time waiting on the disk.
pub(crate) fn run_on_io_pool<T, F>(completer: &Completer, id: u32, wrap: fn(Reply<T>) -> AnyReply, work: F)
where
    T: Send + 'static,
    F: FnOnce() -> core::Result<T> + Send + 'static,
{
    run_on(&IO_POOL, completer, id, wrap, work)
}

fn run_on<T, F>(pool: &rayon::ThreadPool, completer: &Completer, id: u32, wrap: fn(Reply<T>) -> AnyReply, work: F)
where
    T: Send + 'static,
    F: FnOnce() -> core::Result<T> + Send + 'static,
{
    let done = completer.done.clone();
    pool.spawn(move || {
        let reply = match catch_unwind(AssertUnwindSafe(work)) {
            Ok(Ok(value)) => Reply { value: Some(value), error: None },
            Ok(Err(err)) => Reply { value: None, error: Some(NativeError::from(&err)) },
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                Reply { value: None, error: Some(NativeError::internal(format!("panic in the engine: {what}"))) }
            }
        };
        done.call(Done { id, reply: wrap(reply) }, ThreadsafeFunctionCallMode::NonBlocking);
    });
}

/// The one place where core error kinds become stable codes.
pub fn code_of(kind: core::ErrorKind) -> &'static str {
    use core::ErrorKind as K;
    match kind {
        K::NotFound => "NOT_FOUND",
        K::IsDirectory => "IS_DIRECTORY",
        K::BlockedDevice => "BLOCKED_DEVICE",
        K::OutsideRoots => "PATH_OUTSIDE_WORKSPACE",
        K::InvalidPath => "INVALID_INPUT",
        K::TooLarge => "FILE_TOO_LARGE",
        K::Image => "INVALID_IMAGE",
        K::Cancelled => "ABORTED",
        K::PermissionDenied => "PERMISSION_DENIED",
        K::Stale => "STALE",
        K::Exists => "FILE_EXISTS",
        K::Encoding => "ENCODING",
        K::InvalidPattern | K::InvalidGlob => "INVALID_PATTERN",
        K::InvalidInput => "INVALID_INPUT",
        K::Pdf => "INVALID_PDF",
        K::Notebook => "INVALID_NOTEBOOK",
        K::Timeout => "TIMEOUT",
        K::NoSpace => "NO_SPACE",
        _ => "IO_ERROR",
    }
}

/// A failure, as it crosses to JavaScript.
#[napi(object)]
pub struct NativeError {
    /// The stable code.
    pub code: String,
    /// A message for people (lowercase, no path).
    pub message: String,
    /// The path the error is about, if any.
    pub path: Option<String>,
    /// For INVALID_PATTERN: "pattern" (a regular expression) or "glob".
    pub field: Option<String>,
}

impl NativeError {
    fn internal(message: String) -> NativeError {
        NativeError { code: "INTERNAL".into(), message, path: None, field: None }
    }
}

impl From<&core::Error> for NativeError {
    fn from(err: &core::Error) -> NativeError {
        NativeError {
            code: code_of(err.kind()).into(),
            message: err.message().into(),
            path: err.path().map(|p| p.display().to_string()),
            field: match err.kind() {
                core::ErrorKind::InvalidPattern => Some("pattern".into()),
                core::ErrorKind::InvalidGlob => Some("glob".into()),
                _ => None,
            },
        }
    }
}

/// Either a value or an error; exactly one is set.
pub struct Reply<T> {
    value: Option<T>,
    error: Option<NativeError>,
}

impl<T: ToNapiValue> ToNapiValue for Reply<T> {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
        let env_ = Env::from_raw(env);
        let mut obj = Object::new(&env_)?;
        if let Some(value) = val.value {
            obj.set("value", value)?;
        }
        if let Some(error) = val.error {
            obj.set("error", error)?;
        }
        Object::to_napi_value(env, obj)
    }
}

/// A cancellation flag: JavaScript calls `cancel()` when its AbortSignal fires.
#[napi]
pub struct CancelToken {
    inner: core::Cancel,
}

#[napi]
impl CancelToken {
    /// Creates a token that is not cancelled.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> CancelToken {
        CancelToken { inner: core::Cancel::new() }
    }

    /// Requests cancellation of every call that was given this token.
    #[napi]
    pub fn cancel(&self) {
        self.inner.cancel();
    }
}

pub(crate) fn cancel_of(token: Option<&CancelToken>) -> core::Cancel {
    token.map(|t| t.inner.clone()).unwrap_or_default()
}

/// Options of [`Workspace::read`].
#[napi(object)]
pub struct ReadOptions {
    /// Absolute path to read.
    pub path: String,
    /// 1-based first line. @default 1
    pub offset: Option<f64>,
    /// Most lines. @default 2000
    pub limit: Option<f64>,
    /// Whether the caller gave a range (unranged reads are size-capped). @default false
    pub ranged: Option<bool>,
    /// Line numbering: "cat-n", "colon", "compact" (`N<tab>`) or "none". @default "cat-n"
    pub style: Option<String>,
    /// Characters per line before a cut. @default 2000
    pub max_line_chars: Option<u32>,
    /// Largest unranged text read. @default 10485760
    pub max_unranged_bytes: Option<f64>,
    /// Token limit for the built-in counter; 0 when the caller counts. @default 25000
    pub token_limit: Option<u32>,
    /// Longest image edge. @default 2000
    pub image_max_edge: Option<u32>,
    /// Largest encoded image. @default 3932160
    pub image_max_bytes: Option<u32>,
    /// Most pixels an image may have to be decoded. @default 50000000
    pub image_max_pixels: Option<f64>,
    /// PDF: the pages to extract (1-based, in order). Unset: every page, if there are at
    /// most `pdfMaxPages`.
    pub pdf_pages: Option<Vec<u32>>,
    /// PDF: extract every page however many there are (pdf_read). @default false
    pub pdf_all: Option<bool>,
    /// PDF: most pages extracted without `pdfPages`. @default 20
    pub pdf_max_pages: Option<u32>,
    /// Largest PDF read. @default 52428800
    pub pdf_max_bytes: Option<f64>,
    /// Refuse anything that is not a PDF with INVALID_PDF. @default false
    pub pdf_only: Option<bool>,
    /// PDF: give up with TIMEOUT after this many milliseconds. @default 30000
    pub pdf_time_limit_ms: Option<u32>,
    /// PDF: stop interpreting once the pages hold this many characters (pdf_read's
    /// max_chars); later pages are not read. Unset: no such limit.
    pub pdf_max_chars: Option<u32>,
}

impl From<&ReadOptions> for core::ReadConfig {
    fn from(o: &ReadOptions) -> core::ReadConfig {
        let mut cfg = core::ReadConfig::default();
        {
            let page = cfg.page();
            if let Some(v) = o.offset {
                page.offset(v.max(0.0) as u64);
            }
            if let Some(v) = o.limit {
                page.limit(v.max(1.0) as u64);
            }
            if let Some(v) = o.max_line_chars {
                page.max_line_chars(v as usize);
            }
            page.style(match o.style.as_deref() {
                Some("colon") => core::LineStyle::Colon,
                Some("compact") => core::LineStyle::Compact,
                Some("none") => core::LineStyle::Plain,
                _ => core::LineStyle::CatN,
            });
        }
        cfg.ranged(o.ranged.unwrap_or(false));
        if let Some(v) = o.max_unranged_bytes {
            cfg.max_unranged_bytes(v.max(0.0) as u64);
        }
        let limit = o.token_limit.unwrap_or(25_000) as usize;
        cfg.token_limit((limit > 0).then_some(limit));
        // Stop building a page long before it could be sent: no token is longer than 256 bytes.
        cfg.page().max_bytes(limit.max(25_000).saturating_mul(256));
        image_limits(cfg.image(), o.image_max_edge, o.image_max_bytes, o.image_max_pixels);
        if let Some(v) = o.pdf_max_bytes {
            cfg.max_pdf_bytes(v.max(0.0) as u64);
        }
        cfg.pdf_only(o.pdf_only.unwrap_or(false));
        let pdf = cfg.pdf();
        pdf.pages = match (&o.pdf_pages, o.pdf_all.unwrap_or(false)) {
            (Some(pages), _) => core::PdfPages::Only(pages.clone()),
            (None, true) => core::PdfPages::All,
            (None, false) => core::PdfPages::UpTo(o.pdf_max_pages.unwrap_or(20)),
        };
        if let Some(ms) = o.pdf_time_limit_ms {
            pdf.time_limit = std::time::Duration::from_millis(u64::from(ms.max(1)));
        }
        pdf.max_chars = o.pdf_max_chars.map(|n| n as usize);
        cfg
    }
}

/// Sets the image limits a caller gave (an edge in pixels, encoded bytes, decoded pixels).
pub(crate) fn image_limits(image: &mut core::ImageConfig, edge: Option<u32>, bytes: Option<u32>, pixels: Option<f64>) {
    if let Some(v) = edge {
        image.max_edge(v);
    }
    if let Some(v) = bytes {
        image.max_bytes(v as usize);
    }
    if let Some(v) = pixels {
        image.max_pixels(v.max(1.0) as u64);
    }
}

/// The outcome of a read. `kind` says which of the optional groups is set.
#[napi(object)]
pub struct ReadResult {
    /// "text", "image", "binary" or "pdf".
    pub kind: String,
    /// The real path read.
    pub real_path: String,
    /// Modification time, ms since the epoch.
    pub mtime_ms: f64,
    /// Size in bytes.
    pub size: f64,
    /// Content hash of the whole file (two-level xxh3-128), 32 hex digits.
    pub hash: String,
    /// Text: the numbered page.
    pub text: Option<String>,
    /// Text: first line of the page (0 if empty).
    pub start_line: Option<f64>,
    /// Text: last line of the page (0 if empty).
    pub end_line: Option<f64>,
    /// Text: lines in the file.
    pub total_lines: Option<f64>,
    /// Text: lines cut at the character limit.
    pub cut_lines: Option<u32>,
    /// Text: invalid UTF-8 was replaced.
    pub lossy: Option<bool>,
    /// Text: the page outgrew any token limit and stopped early.
    pub overflow: Option<bool>,
    /// Text: "utf-8", "utf-8-bom", "utf-16le" or "utf-16be".
    pub encoding: Option<String>,
    /// Text: exact token count, when it had to be counted.
    pub tokens: Option<u32>,
    /// Text: lines of the page that fit the token limit, when it did not fit.
    pub fit_lines: Option<u32>,
    /// Image: base64 data.
    pub image_base64: Option<String>,
    /// Image: MIME type.
    pub mime: Option<String>,
    /// Image: width sent.
    pub width: Option<u32>,
    /// Image: height sent.
    pub height: Option<u32>,
    /// Image: original width.
    pub original_width: Option<u32>,
    /// Image: original height.
    pub original_height: Option<u32>,
    /// Image: whether it was downscaled or re-encoded.
    pub resized: Option<bool>,
    /// Binary: best guess at the type.
    pub binary_kind: Option<String>,
    /// PDF: what the document gave.
    pub pdf: Option<PdfResult>,
}

/// The text of a PDF, as a read returns it.
#[napi(object)]
pub struct PdfResult {
    /// Pages in the document.
    pub page_count: u32,
    /// The pages extracted, in the order asked.
    pub pages: Vec<PdfPageText>,
    /// Glyphs with no Unicode mapping (shown as U+FFFD).
    pub unmapped: f64,
    /// The document is encrypted.
    pub encrypted: bool,
    /// The document needs a password: nothing could be read.
    pub locked: bool,
    /// More pages than `pdfMaxPages` and none asked for: nothing was extracted.
    pub too_many: bool,
    /// Pages asked for beyond the last: nothing was extracted.
    pub beyond: Vec<u32>,
    /// The text passed 64 MiB and the rest was dropped.
    pub cut: bool,
    /// The text reached `pdfMaxChars`: the last page given is partial, later pages were
    /// not read.
    pub stopped: bool,
}

/// One page's text.
#[napi(object)]
pub struct PdfPageText {
    /// Page number, from 1.
    pub number: u32,
    /// Lines separated by newlines, words by single spaces.
    pub text: String,
}

impl From<core::ReadOutcome> for ReadResult {
    fn from(out: core::ReadOutcome) -> ReadResult {
        let mut r = ReadResult {
            kind: String::new(),
            real_path: out.real_path.display().to_string(),
            mtime_ms: out.mtime_ms,
            size: out.size as f64,
            hash: core::hex128(out.hash),
            text: None,
            start_line: None,
            end_line: None,
            total_lines: None,
            cut_lines: None,
            lossy: None,
            overflow: None,
            encoding: None,
            tokens: None,
            fit_lines: None,
            image_base64: None,
            mime: None,
            width: None,
            height: None,
            original_width: None,
            original_height: None,
            resized: None,
            binary_kind: None,
            pdf: None,
        };
        match out.content {
            core::Content::Text { page, encoding, tokens, fit_lines } => {
                r.kind = "text".into();
                r.start_line = Some(page.start_line as f64);
                r.end_line = Some(page.end_line as f64);
                r.total_lines = Some(page.total_lines as f64);
                r.cut_lines = Some(page.cut_lines);
                r.lossy = Some(page.lossy);
                r.overflow = Some(page.overflow);
                r.encoding = Some(encoding.name().into());
                r.tokens = tokens.map(|t| t as u32);
                r.fit_lines = fit_lines.map(|t| t as u32);
                r.text = Some(page.text);
            }
            core::Content::Image(img) => {
                use base64::Engine as _;
                r.kind = "image".into();
                r.image_base64 = Some(base64::engine::general_purpose::STANDARD.encode(&img.bytes));
                r.mime = Some(img.mime.into());
                r.width = Some(img.width);
                r.height = Some(img.height);
                r.original_width = Some(img.original_width);
                r.original_height = Some(img.original_height);
                r.resized = Some(img.resized);
            }
            core::Content::Binary { kind } => {
                r.kind = "binary".into();
                r.binary_kind = Some(kind.into());
            }
            core::Content::Pdf(pdf) => {
                r.kind = "pdf".into();
                r.pdf = Some(PdfResult {
                    page_count: pdf.page_count,
                    pages: pdf.pages.into_iter().map(|p| PdfPageText { number: p.number, text: p.text }).collect(),
                    unmapped: pdf.unmapped as f64,
                    encrypted: pdf.encrypted,
                    locked: pdf.locked,
                    too_many: pdf.too_many,
                    beyond: pdf.beyond,
                    cut: pdf.cut,
                    stopped: pdf.stopped,
                });
            }
        }
        r
    }
}

/// What a live index is doing and holds.
#[napi(object)]
pub struct IndexStatusInfo {
    /// 'idle' | 'building' | 'ready' | 'off'.
    pub state: String,
    /// Why it is off.
    pub reason: Option<String>,
    /// Files in the snapshot.
    pub files: u32,
    /// Memory it holds (bytes, estimated from what it allocated).
    pub bytes: f64,
    /// Its memory budget (bytes).
    pub budget: f64,
    /// How long the last build took (ms).
    pub build_ms: f64,
    /// File-system events its watcher reported.
    pub events: f64,
}

impl From<core::IndexStatus> for IndexStatusInfo {
    fn from(s: core::IndexStatus) -> IndexStatusInfo {
        let (state, reason) = match s.state {
            core::IndexState::Idle => ("idle", None),
            core::IndexState::Building => ("building", None),
            core::IndexState::Ready => ("ready", None),
            core::IndexState::Off(why) => ("off", Some(why)),
        };
        IndexStatusInfo {
            state: state.into(),
            reason,
            files: s.files.min(u32::MAX as usize) as u32,
            bytes: s.bytes as f64,
            budget: s.budget as f64,
            build_ms: s.build_ms,
            events: s.events as f64,
        }
    }
}

/// The folders a toolkit may touch, checked on real paths by every call.
#[napi]
pub struct Workspace {
    pub(crate) roots: Arc<core::Roots>,
    /// Shared by every session of the toolkit: what passes over large files learned.
    index: Arc<core::IndexCache>,
    /// Shared by every session of the toolkit: the chunks and terms of the code ranked so far.
    pub(crate) code_index: Arc<core::CodeIndex>,
    /// The live index of the workspace (the first root), when the toolkit has one.
    pub(crate) live: Option<Arc<core::LiveIndex>>,
}

#[napi]
impl Workspace {
    /// Creates the confinement from existing folders (the workspace first).
    #[napi(constructor)]
    pub fn new(roots: Vec<String>) -> Result<Workspace> {
        let roots = core::Roots::new(&roots).map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
        Ok(Workspace {
            roots: Arc::new(roots),
            index: Arc::new(core::IndexCache::default()),
            code_index: Arc::new(core::CodeIndex::default()),
            live: None,
        })
    }

    /// Gives the workspace (the first root) a live index of at most `budget` bytes, built
    /// on the first search, or now when `start`. Searches then read only the files it
    /// names as possible matches.
    #[napi]
    pub fn use_index(&mut self, budget: f64, start: bool) {
        let Some(root) = self.roots.first() else { return };
        let live = Arc::new(core::LiveIndex::new(root, budget.max(0.0) as usize));
        if start {
            live.start();
        }
        self.live = Some(live);
    }

    /// What the live index is doing and holds; `null` without one.
    #[napi]
    pub fn index_status(&self) -> Option<IndexStatusInfo> {
        self.live.as_ref().map(|live| IndexStatusInfo::from(live.status()))
    }

    /// Waits (blocking the calling thread, at most `timeoutMs`) until a build started has
    /// ended; for tests and benchmarks.
    #[napi]
    pub fn wait_index(&self, timeout_ms: u32) -> bool {
        self.live.as_ref().is_none_or(|live| live.wait_ready(std::time::Duration::from_millis(timeout_ms.into())))
    }

    /// Stops the live index's watcher and frees it; later searches walk.
    #[napi]
    pub fn close_index(&self) {
        if let Some(live) = &self.live {
            live.close();
        }
    }

    /// Test hooks: `"kill"` stops the watcher as a crash would, `"overflow"` reports a
    /// lost event queue.
    #[napi]
    pub fn break_index_watcher(&self, how: String) {
        if let Some(live) = &self.live {
            match how.as_str() {
                "kill" => live.kill_watcher(),
                _ => live.overflow_watcher(),
            }
        }
    }

    /// Reads a file inside the roots on the worker pool; the reply goes to `completer` as `id`.
    #[napi]
    pub fn read(&self, completer: &Completer, id: u32, options: ReadOptions, cancel: Option<&CancelToken>) {
        let roots = self.roots.clone();
        let index = self.index.clone();
        let cancel = cancel_of(cancel);
        let config = core::ReadConfig::from(&options);
        let path = PathBuf::from(options.path);
        run_on_pool(completer, id, AnyReply::Read, move || {
            core::read_file_cached(&roots, &path, &config, Some(&index), &cancel).map(ReadResult::from)
        });
    }
}

/// Counts o200k tokens of a text on the worker pool; the reply goes to `completer` as `id`.
#[napi]
pub fn count_tokens(completer: &Completer, id: u32, text: String) {
    run_on_pool(completer, id, AnyReply::Count, move || Ok(core::count_tokens(&text) as u32));
}

/// The content hash (two-level xxh3-128) of a file, on the worker pool; the reply (32 hex
/// digits) goes to `completer` as `id`.
#[napi]
pub fn hash_file(completer: &Completer, id: u32, path: String, cancel: Option<&CancelToken>) {
    let cancel = cancel_of(cancel);
    run_on_pool(completer, id, AnyReply::Text, move || {
        core::hash_file(std::path::Path::new(&path), &cancel).map(|(h, _)| core::hex128(h))
    });
}

/// The content hash (two-level xxh3-128) of bytes, on the worker pool; the reply (32 hex
/// digits) goes to `completer` as `id`.
#[napi]
pub fn hash_buffer(completer: &Completer, id: u32, data: Buffer) {
    run_on_pool(completer, id, AnyReply::Text, move || Ok(core::hex128(core::hash_bytes(&data))));
}
