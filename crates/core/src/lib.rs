//! fsgate-core is the engine behind fsgate's agent tools: confined file access,
//! streaming pagination, content hashing, exact token counting, image shaping, and
//! safe changes (exact-match edits on a ladder of normalizations, atomic writes that
//! check the version the caller saw).
//!
//! It knows nothing of sessions, schemas or policies; those live in the TypeScript
//! facade. Every operation here is a plain, blocking function that takes a [`Cancel`]
//! flag, so a binding can run it on a worker thread and stop it between chunks.
//!
//! The main entry point is [`read_file`]: it opens a path inside a set of [`Roots`]
//! (checking the real path, and on Linux the opened file itself), sniffs what the file
//! is from its bytes, and returns a [`Page`] of numbered lines, a [`ShapedImage`], or a
//! notice, together with the size, mtime and content hash (a two-level xxh3-128, see
//! [`ContentHasher`]) that a read-before-write contract records.
//!
//! ```
//! use fsgate_core::{read_file, Cancel, Content, ReadConfig, Roots};
//!
//! let dir = std::env::temp_dir().join("fsgate-doc-example");
//! std::fs::create_dir_all(&dir).unwrap();
//! std::fs::write(dir.join("hello.txt"), "one\ntwo\nthree\n").unwrap();
//!
//! let roots = Roots::new(&[&dir]).unwrap();
//! let mut config = ReadConfig::default();
//! config.page().offset(2).limit(1);
//! let out = read_file(&roots, &dir.join("hello.txt"), &config, &Cancel::new()).unwrap();
//! match out.content {
//!     Content::Text { page, .. } => {
//!         assert_eq!(page.text, "     2\ttwo\n");
//!         assert_eq!(page.total_lines, 3);
//!     }
//!     _ => unreachable!(),
//! }
//! ```
//!
//! The changing side is [`write_file`] and [`edit_file`]: each resolves where the write
//! lands ([`Roots::target`]), compares the file with the version the caller expects
//! ([`Expect`]: size and content hash, so a touch is not a change and a same-size
//! rewrite is), decodes text in its own encoding ([`decode`]: UTF-8 with or without a
//! BOM, UTF-16 with one; anything that would not round-trip is refused), applies
//! [`apply_edit`], and renames a flushed temp file over the target. [`apply_patch`]
//! changes several files at once with a V4A patch (Codex's format, [`parse_patch`]):
//! every new version is computed and staged before any file changes, and then all of them
//! land or none does ([`commit_files`], which also undoes a patch).
//!
//! The searches walk a tree as ripgrep does, in parallel, with its ignore rules:
//! [`glob_files`] lists paths, [`grep`] searches contents with ripgrep's own searcher, and
//! [`rank_folder`] scores chunks of code (definitions and blank-line blocks) with BM25
//! over identifier- and Unicode-aware terms, keeping a [`CodeIndex`] per workspace so that
//! unchanged files are not read again.
//!
//! On Linux, shell and git children are started by [`spawn`] (`posix_spawn`, whose cost
//! does not grow with the host's memory) or, where bubblewrap cannot be had, by
//! [`spawn_confined`] under a [`Confinement`]: Landlock and seccomp, set up between a
//! clone and the exec, so the child may read everything but write only its folders and
//! use no network.
//!
//! Why one pass: a ranged read of a huge log must count every line (to say how many
//! remain) and hash every byte (so a later write can tell whether the file changed), but
//! keep only the page. [`page()`] does all three while streaming fixed-size chunks, so
//! memory follows the page. For large UTF-8 files the pass is split across cores (each
//! reads, hashes and counts its own run of 1 MiB chunks, which is why the content hash is
//! hashed per chunk), and an [`IndexCache`] remembers where lines start, so the next deep
//! page of an unchanged file is a seek.
#![deny(missing_docs)]

mod cancel;
mod confine;
mod dir;
mod edit;
mod error;
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzz;
mod glob;
mod grep;
mod hash;
mod image;
mod index;
#[cfg(target_os = "linux")]
mod landlock;
mod list;
mod live;
mod notebook;
mod page;
mod patch;
mod pdf;
mod rank;
mod read;
mod sniff;
#[cfg(target_os = "linux")]
mod spawn;
#[cfg(test)]
mod testutil;
mod tokens;
mod walk;
mod write;

pub use crate::cancel::Cancel;
pub use crate::confine::{open_regular, Opened, Roots};
pub use crate::edit::{
    apply_edit, insert_lines, snippet, unified_diff, Candidate, EditFailure, EditSpec, Edited, Rung,
};
pub use crate::error::{Error, ErrorKind, Result};
pub use crate::glob::{glob_files, GlobConfig, GlobOrder, GlobOutcome};
pub use crate::grep::{grep, GrepConfig, GrepMode, GrepOutcome};
pub use crate::hash::{hash_bytes, hash_file, hash_reader, hex128, ContentHasher, HASH_CHUNK};
pub use crate::image::{shape_image, ImageConfig, ShapedImage};
pub use crate::index::IndexCache;
#[cfg(target_os = "linux")]
pub use crate::landlock::{landlock_abi, set_host_dumpable, Confinement};
pub use crate::list::{list_directory, Entry, EntryKind, ListConfig, Listing};
pub use crate::notebook::{
    apply_cell_edit, edit_notebook, read_notebook, CellEdit, CellEditMode, CellEdited, CellView, NotebookConfig,
    NotebookPage, OutputView,
};
pub use crate::page::{group, page, LineStyle, Page, PageConfig};
pub use crate::patch::{
    apply_patch, commit_files, parse_patch, remove_empty_folders, Action, Changed, Chunk, ChunkLine, CommitFailure,
    FileChange, FileResult, Fuzz, HunkMiss, LineKind, OnDisk, OpSummary, OpTarget, ParseError, Patch, PatchConfig,
    PatchFailure, PatchOp, PatchOutcome,
};
pub use crate::pdf::{extract as extract_pdf, PdfPage, PdfPages, PdfRequest, PdfText};
pub use crate::rank::{rank, rank_folder, CodeIndex, RankConfig, RankFile, RankHit, RankOutcome};
pub use crate::read::{read_file, read_file_cached, Content, ReadConfig, ReadOutcome};
pub use crate::sniff::{sniff, ImageFormat, Kind, TextEncoding, SNIFF_BYTES};
#[cfg(target_os = "linux")]
pub use crate::spawn::{spawn, spawn_confined, wait, Exit, Spawned};
pub use crate::tokens::{count_tokens, lines_within};
pub use crate::walk::{search_folder, WalkConfig};
pub use crate::write::{
    decode, edit_file, encode, insert_into_file, remove_file, write_file, EditOutcome, Expect, Payload, Target,
    WriteConfig, Written,
};
