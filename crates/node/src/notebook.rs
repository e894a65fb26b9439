//! The bindings of Jupyter notebooks: a page of cells for Read, and one-cell edits that
//! keep every other byte of the file.

use std::path::PathBuf;

use fsgate_core as core;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::change::{ChangeChecks, WriteResult};
use crate::{cancel_of, image_limits, run_on_io_pool, run_on_pool, AnyReply, CancelToken, Completer, Workspace};

/// Options of [`Workspace::read_notebook`].
#[napi(object)]
pub struct NotebookOptions {
    /// Absolute path of the notebook.
    pub path: String,
    /// The 1-based first cell. @default 1
    pub offset: Option<u32>,
    /// Most cells. @default every cell
    pub limit: Option<u32>,
    /// Characters of one output's text shown. @default 10000
    pub max_output_chars: Option<u32>,
    /// Largest notebook read. @default 104857600
    pub max_bytes: Option<f64>,
    /// Longest image edge in pixels. @default 2000
    pub image_max_edge: Option<u32>,
    /// Largest encoded image in bytes. @default 3932160
    pub image_max_bytes: Option<u32>,
    /// Most pixels an image may have to be decoded. @default 50000000
    pub image_max_pixels: Option<f64>,
}

/// One output of a code cell.
#[napi(object)]
pub struct NotebookOutputInfo {
    /// "stream", "execute_result", "display_data" or "error".
    pub output_type: String,
    /// Its text (may be empty).
    pub text: String,
    /// Its image, base64.
    pub image_base64: Option<String>,
    /// The image's MIME type.
    pub mime: Option<String>,
    /// Width and height sent.
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// Width and height of the image in the notebook.
    pub original_width: Option<u32>,
    pub original_height: Option<u32>,
}

/// One cell.
#[napi(object)]
pub struct NotebookCellInfo {
    /// Its id, or `cell-N` (0-based index) when it has none.
    pub id: String,
    /// "code", "markdown" or "raw".
    pub cell_type: String,
    /// The source.
    pub source: String,
    /// A code cell's execution count.
    pub execution_count: Option<f64>,
    /// Its outputs.
    pub outputs: Vec<NotebookOutputInfo>,
    /// Outputs with nothing to show.
    pub hidden_outputs: u32,
}

/// A page of a notebook.
#[napi(object)]
pub struct NotebookResult {
    /// The real path read.
    pub real_path: String,
    /// Modification time, ms since the epoch.
    pub mtime_ms: f64,
    /// Size in bytes.
    pub size: f64,
    /// Content hash of the file, 32 hex digits.
    pub hash: String,
    /// The kernel's language.
    pub language: String,
    /// Cells in the notebook.
    pub total_cells: u32,
    /// The 1-based number of the first cell returned (0 when none).
    pub first_cell: u32,
    /// The cells returned.
    pub cells: Vec<NotebookCellInfo>,
    /// Output texts cut around a marker.
    pub cut_outputs: u32,
}

impl From<core::NotebookPage> for NotebookResult {
    fn from(p: core::NotebookPage) -> NotebookResult {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        NotebookResult {
            real_path: p.real_path.display().to_string(),
            mtime_ms: p.mtime_ms,
            size: p.size as f64,
            hash: core::hex128(p.hash),
            language: p.language,
            total_cells: p.total_cells as u32,
            first_cell: p.first_cell as u32,
            cut_outputs: p.cut_outputs as u32,
            cells: p
                .cells
                .into_iter()
                .map(|c| NotebookCellInfo {
                    id: c.id,
                    cell_type: c.cell_type,
                    source: c.source,
                    execution_count: c.execution_count.map(|n| n as f64),
                    hidden_outputs: c.hidden_outputs as u32,
                    outputs: c
                        .outputs
                        .into_iter()
                        .map(|o| NotebookOutputInfo {
                            output_type: o.output_type,
                            text: o.text,
                            image_base64: o.image.as_ref().map(|i| b64.encode(&i.bytes)),
                            mime: o.image.as_ref().map(|i| i.mime.to_string()),
                            width: o.image.as_ref().map(|i| i.width),
                            height: o.image.as_ref().map(|i| i.height),
                            original_width: o.image.as_ref().map(|i| i.original_width),
                            original_height: o.image.as_ref().map(|i| i.original_height),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// Options of [`Workspace::edit_notebook`].
#[napi(object)]
pub struct NotebookEditOptions {
    /// Absolute path of the notebook whose cells are edited.
    pub source: String,
    /// Absolute path to write (the source, or a new working copy beside it).
    pub path: String,
    /// The cell: its id, or `cell-N`.
    pub cell_id: Option<String>,
    /// The new source.
    pub new_source: String,
    /// "code" or "markdown".
    pub cell_type: Option<String>,
    /// "replace", "insert" or "delete". @default "replace"
    pub edit_mode: Option<String>,
    /// The id of an inserted cell, where the format has ids.
    pub new_id: Option<String>,
    /// Largest notebook edited. @default 104857600
    pub max_bytes: Option<f64>,
    /// What must hold of the source when the edit is written.
    pub checks: ChangeChecks,
}

/// What a notebook edit did.
#[napi(object)]
pub struct NotebookEditResult {
    /// What is on disk now.
    pub written: WriteResult,
    /// The id of the cell changed, inserted or removed.
    pub cell_id: Option<String>,
    /// Its 0-based index.
    pub index: u32,
    /// Its type.
    pub cell_type: String,
    /// The source replaced or removed.
    pub old_source: Option<String>,
    /// The kernel's language.
    pub language: String,
    /// Cells after the edit.
    pub total_cells: u32,
}

#[napi]
impl Workspace {
    /// Reads a page of a notebook's cells on the worker pool; the reply goes to `completer` as `id`.
    #[napi]
    pub fn read_notebook(
        &self,
        completer: &Completer,
        id: u32,
        options: NotebookOptions,
        cancel: Option<&CancelToken>,
    ) {
        let roots = self.roots.clone();
        let cancel = cancel_of(cancel);
        let mut config = core::NotebookConfig::default();
        config.offset(options.offset.unwrap_or(1) as usize);
        if let Some(limit) = options.limit {
            config.limit(limit as usize);
        }
        if let Some(chars) = options.max_output_chars {
            config.max_output_chars(chars as usize);
        }
        if let Some(bytes) = options.max_bytes {
            config.max_bytes(bytes.max(0.0) as u64);
        }
        image_limits(config.image(), options.image_max_edge, options.image_max_bytes, options.image_max_pixels);
        let path = PathBuf::from(options.path);
        run_on_pool(completer, id, AnyReply::Notebook, move || {
            core::read_notebook(&roots, &path, &config, &cancel).map(NotebookResult::from)
        });
    }

    /// Applies one cell edit and writes the notebook atomically; the reply goes to
    /// `completer` as `id`. `source` and `path` must be the real paths the caller checked.
    #[napi]
    pub fn edit_notebook(
        &self,
        completer: &Completer,
        id: u32,
        options: NotebookEditOptions,
        cancel: Option<&CancelToken>,
    ) -> Result<()> {
        let roots = self.roots.clone();
        let cancel = cancel_of(cancel);
        let config = core::WriteConfig::try_from(&options.checks)?;
        let mode = match options.edit_mode.as_deref() {
            None | Some("replace") => core::CellEditMode::Replace,
            Some("insert") => core::CellEditMode::Insert,
            Some("delete") => core::CellEditMode::Delete,
            Some(other) => return Err(Error::new(Status::InvalidArg, format!("unknown edit mode {other:?}"))),
        };
        let max_bytes = options.max_bytes.map_or(100 << 20, |b| b.max(0.0) as u64);
        run_on_io_pool(completer, id, AnyReply::NotebookEdit, move || {
            let edit = core::CellEdit {
                cell_id: options.cell_id.as_deref(),
                new_source: &options.new_source,
                cell_type: options.cell_type.as_deref(),
                mode,
                new_id: options.new_id.as_deref(),
            };
            let (source, path) = (PathBuf::from(&options.source), PathBuf::from(&options.path));
            let (written, edited) = core::edit_notebook(&roots, &source, &path, &edit, &config, max_bytes, &cancel)?;
            Ok(NotebookEditResult {
                written: WriteResult::from(written),
                cell_id: edited.cell_id,
                index: edited.index as u32,
                cell_type: edited.cell_type,
                old_source: edited.old_source,
                language: edited.language,
                total_cells: edited.total_cells as u32,
            })
        });
        Ok(())
    }
}
