//! Jupyter notebooks: the cells of a notebook as a reader shows them (sources, text
//! outputs, images shaped like any image read), and cell edits that change the bytes of
//! one cell and keep every other byte of the file as it was.
//!
//! Why not parse and re-serialize: notebooks are written by many programs (Jupyter's
//! indent of one space and sorted keys, VS Code's, hand-made ones), and a rewrite in any
//! one style turns a one-cell change into a diff of the whole file. The parser here
//! ([`json`]) keeps the byte span of every value, so an edit replaces the span of one
//! cell (or inserts one beside it, or removes one), writing new JSON in the style the
//! document already uses; the result is parsed again before it is written.

mod json;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::cancel::Cancel;
use crate::confine::{Opened, Roots};
use crate::error::{Error, ErrorKind, Result};
use crate::hash::hash_bytes;
use crate::image::{shape_image, ImageConfig, ShapedImage};
use crate::sniff::{sniff, Kind};
use crate::write::{write_file, Expect, Payload, WriteConfig, Written};

use json::{Member, Node, Style, Value};

/// How to read a notebook. Built with setters; see each for its default.
#[derive(Clone, Debug)]
pub struct NotebookConfig {
    offset: usize,
    limit: usize,
    max_output_chars: usize,
    max_bytes: u64,
    image: ImageConfig,
}

impl Default for NotebookConfig {
    fn default() -> NotebookConfig {
        NotebookConfig {
            offset: 1,
            limit: usize::MAX,
            max_output_chars: 10_000,
            max_bytes: 100 * 1024 * 1024,
            image: ImageConfig::default(),
        }
    }
}

impl NotebookConfig {
    /// The 1-based first cell returned. By default, this is 1.
    pub fn offset(&mut self, cell: usize) -> &mut Self {
        self.offset = cell.max(1);
        self
    }

    /// The most cells returned. By default, every cell.
    pub fn limit(&mut self, cells: usize) -> &mut Self {
        self.limit = cells.max(1);
        self
    }

    /// Characters of one output's text shown; a longer text keeps its start and end
    /// around a marker. By default, this is 10,000.
    pub fn max_output_chars(&mut self, chars: usize) -> &mut Self {
        self.max_output_chars = chars.max(100);
        self
    }

    /// The largest notebook read. By default, this is 100 MiB.
    pub fn max_bytes(&mut self, bytes: u64) -> &mut Self {
        self.max_bytes = bytes;
        self
    }

    /// Limits for the images of outputs. By default, 2000 px and 3.75 MiB.
    pub fn image(&mut self) -> &mut ImageConfig {
        &mut self.image
    }
}

/// One cell as a reader shows it.
#[derive(Debug)]
pub struct CellView {
    /// The cell's `id`, or `cell-N` (its 0-based index) when it has none.
    pub id: String,
    /// "code", "markdown" or "raw" (as the notebook says).
    pub cell_type: String,
    /// The source, joined.
    pub source: String,
    /// A code cell's execution count.
    pub execution_count: Option<i64>,
    /// The outputs of a code cell, in order.
    pub outputs: Vec<OutputView>,
    /// Outputs of a type with nothing to show (or an image that could not be decoded).
    pub hidden_outputs: usize,
}

/// One output of a code cell.
#[derive(Debug)]
pub struct OutputView {
    /// "stream", "execute_result", "display_data" or "error".
    pub output_type: String,
    /// Its text (terminal escape codes removed; cut around a marker when long).
    pub text: String,
    /// Its image, shaped for a model.
    pub image: Option<ShapedImage>,
}

/// A page of a notebook's cells, with the facts a write contract needs.
#[derive(Debug)]
pub struct NotebookPage {
    /// The real path read.
    pub real_path: PathBuf,
    /// Modification time, ms since the epoch.
    pub mtime_ms: f64,
    /// Size in bytes.
    pub size: u64,
    /// xxh3-128 of the file's bytes.
    pub hash: u128,
    /// The kernel's language (`metadata.language_info.name`, else "python").
    pub language: String,
    /// Cells in the notebook.
    pub total_cells: usize,
    /// The 1-based number of the first cell returned (0 when none).
    pub first_cell: usize,
    /// The cells returned.
    pub cells: Vec<CellView>,
    /// Output texts that were cut.
    pub cut_outputs: usize,
}

/// Reads a notebook inside the roots and returns a page of its cells.
///
/// A file that is not JSON, or whose `cells` is not a list of cells with a string or
/// string-list `source`, is [`ErrorKind::Notebook`], with where and what.
pub fn read_notebook(roots: &Roots, path: &Path, config: &NotebookConfig, cancel: &Cancel) -> Result<NotebookPage> {
    let (bytes, real_path, mtime_ms) = read_bytes(roots, path, config.max_bytes)?;
    cancel.check()?;
    let nb = Notebook::parse(&bytes).map_err(|e| e.with_path(path))?;
    let cells = nb.cells();
    let total = cells.len();
    let first = config.offset.min(total + 1);
    let mut page = NotebookPage {
        real_path,
        mtime_ms,
        size: bytes.len() as u64,
        hash: hash_bytes(&bytes),
        language: nb.language(),
        total_cells: total,
        first_cell: if first <= total { first } else { 0 },
        cells: Vec::new(),
        cut_outputs: 0,
    };
    for (i, cell) in cells.iter().enumerate().skip(first - 1).take(config.limit) {
        cancel.check()?;
        page.cells.push(nb.view(cell, i, config, &mut page.cut_outputs));
    }
    Ok(page)
}

/// What a notebook edit does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellEditMode {
    /// Replaces the cell's source (and, when given, its type).
    Replace,
    /// Inserts a new cell after the cell named, or first when none is named.
    Insert,
    /// Removes the cell.
    Delete,
}

/// One notebook edit.
#[derive(Clone, Debug)]
pub struct CellEdit<'a> {
    /// The cell: its `id`, or `cell-N` (0-based index) for a cell without one. Required
    /// except for an insert at the start.
    pub cell_id: Option<&'a str>,
    /// The new source (ignored by a delete).
    pub new_source: &'a str,
    /// "code" or "markdown": required for an insert; for a replace, the new type.
    pub cell_type: Option<&'a str>,
    /// What to do.
    pub mode: CellEditMode,
    /// The id of an inserted cell, where the notebook's format has ids (nbformat 4.5+).
    pub new_id: Option<&'a str>,
}

/// What a notebook edit did.
#[derive(Debug)]
pub struct CellEdited {
    /// The notebook's new bytes.
    pub bytes: Vec<u8>,
    /// The id of the cell changed, inserted or removed (none for an inserted cell in a
    /// notebook without ids).
    pub cell_id: Option<String>,
    /// The 0-based index of the cell changed, inserted or removed.
    pub index: usize,
    /// The cell's type after the edit (before it, for a delete).
    pub cell_type: String,
    /// The source replaced or removed.
    pub old_source: Option<String>,
    /// The kernel's language.
    pub language: String,
    /// Cells after the edit.
    pub total_cells: usize,
}

/// Applies one cell edit to a notebook's bytes. Everything outside the cell changed (and
/// the separator beside a cell inserted or removed) is kept byte for byte; the new bytes
/// are parsed again and checked before they are returned.
pub fn apply_cell_edit(bytes: &[u8], edit: &CellEdit<'_>) -> Result<CellEdited> {
    let nb = Notebook::parse(bytes)?;
    let cells = nb.cells();
    let index = find_cell(cells, edit.cell_id, edit.mode)?;
    let language = nb.language();
    let (new_doc, out) = match edit.mode {
        CellEditMode::Replace => nb.replace(index, edit)?,
        CellEditMode::Insert => nb.insert(index, edit)?,
        CellEditMode::Delete => nb.delete(index)?,
    };
    // The result must be a notebook again, with the change where it was meant to be.
    let again = Notebook::parse(&new_doc).map_err(|e| {
        Error::new(
            ErrorKind::Notebook,
            format!("the edit would not leave a valid notebook ({}); nothing was written", e.message()),
        )
    })?;
    let expected = match edit.mode {
        CellEditMode::Insert => cells.len() + 1,
        CellEditMode::Delete => cells.len() - 1,
        CellEditMode::Replace => cells.len(),
    };
    let check = again.cells().len() == expected
        && (edit.mode == CellEditMode::Delete
            || again.cells()[index].get("source").and_then(Node::joined_text).as_deref() == Some(edit.new_source));
    if !check {
        return Err(Error::new(ErrorKind::Notebook, "the edit did not come out as meant; nothing was written"));
    }
    Ok(CellEdited { bytes: new_doc, index, language, total_cells: expected, ..out })
}

/// Edits one cell of the notebook at `source` and writes the result atomically to
/// `path` (usually the same file; a working copy beside it otherwise). The version read
/// is checked against `config`'s expectation, and again just before the rename, so a
/// change by anyone else in between is [`ErrorKind::Stale`].
pub fn edit_notebook(
    roots: &Roots,
    source: &Path,
    path: &Path,
    edit: &CellEdit<'_>,
    config: &WriteConfig,
    max_bytes: u64,
    cancel: &Cancel,
) -> Result<(Written, CellEdited)> {
    let (bytes, _, _) = read_bytes(roots, source, max_bytes)?;
    if let Expect::Version { size, hash } = config.expected() {
        if bytes.len() as u64 != size || hash_bytes(&bytes) != hash {
            return Err(Error::new(ErrorKind::Stale, "changed since it was read").with_path(source));
        }
    }
    cancel.check()?;
    let edited = apply_cell_edit(&bytes, edit).map_err(|e| e.with_path(source))?;
    if edited.bytes.len() as u64 > max_bytes {
        return Err(
            Error::new(ErrorKind::TooLarge, "would grow past the largest notebook this tool reads").with_path(source)
        );
    }
    cancel.check()?;
    let mut write = config.clone();
    if source == path {
        // The version this edit started from, checked again just before the rename.
        write.expect(Expect::Version { size: bytes.len() as u64, hash: hash_bytes(&bytes) });
    } else {
        write.expect(Expect::Absent);
    }
    let written = write_file(roots, path, Payload::Bytes(&edited.bytes), &write)?;
    Ok((written, edited))
}

/// Reads a notebook's bytes, confined to the roots, at most `max` of them.
fn read_bytes(roots: &Roots, path: &Path, max: u64) -> Result<(Vec<u8>, PathBuf, f64)> {
    let (file, meta, real) = match roots.open_file(path)? {
        Opened::File { file, meta, real } => (file, meta, real),
        Opened::Null => return Err(Error::new(ErrorKind::Notebook, "is empty, not a notebook").with_path(path)),
    };
    if meta.len() > max {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!(
                "notebook is {} bytes, over the {} byte limit",
                crate::page::group(meta.len()),
                crate::page::group(max)
            ),
        )
        .with_path(path));
    }
    let mtime_ms =
        meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| Error::io(e).with_path(path))?;
    if bytes.len() as u64 > max {
        return Err(
            Error::new(ErrorKind::TooLarge, "notebook grew past the byte limit while it was read").with_path(path)
        );
    }
    Ok((bytes, real, mtime_ms))
}

/// A parsed notebook and the bytes it came from.
struct Notebook<'a> {
    bytes: &'a [u8],
    /// Where the JSON starts (after a UTF-8 byte order mark).
    base: usize,
    root: Node,
    style: Style,
}

impl<'a> Notebook<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Notebook<'a>> {
        let base = if bytes.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        let mut root = json::parse(&bytes[base..])
            .map_err(|e| Error::new(ErrorKind::Notebook, format!("is not valid JSON: {e}")))?;
        shift(&mut root, base);
        let not_notebook = |why: &str| Error::new(ErrorKind::Notebook, format!("is not a Jupyter notebook: {why}"));
        let cells = root.get("cells").ok_or_else(|| not_notebook("it has no top-level \"cells\" list"))?;
        let cells = cells.as_array().ok_or_else(|| not_notebook("its \"cells\" is not a list"))?;
        for (i, cell) in cells.iter().enumerate() {
            if cell.members().is_none() {
                return Err(not_notebook(&format!("cell {i} is not an object")));
            }
            let text = cell.get("source").and_then(Node::joined_text);
            if text.is_none() {
                return Err(not_notebook(&format!("cell {i} has no string or string-list \"source\"")));
            }
        }
        let style = detect_style(bytes, &root);
        Ok(Notebook { bytes, base, root, style })
    }

    fn cells(&self) -> &[Node] {
        self.root.get("cells").and_then(Node::as_array).unwrap_or_default()
    }

    fn language(&self) -> String {
        self.root
            .get("metadata")
            .and_then(|m| m.get("language_info"))
            .and_then(|l| l.get("name"))
            .and_then(Node::as_str)
            .unwrap_or("python")
            .to_string()
    }

    /// Whether new cells get an `id`: nbformat 4.5 and later require one.
    fn has_ids(&self) -> bool {
        let number = |key: &str| {
            self.root
                .get(key)
                .map(|n| &self.bytes[n.span.clone()])
                .and_then(|b| std::str::from_utf8(b).ok()?.parse::<u64>().ok())
        };
        match (number("nbformat"), number("nbformat_minor")) {
            (Some(major), _) if major > 4 => true,
            (Some(4), Some(minor)) => minor >= 5,
            _ => self.cells().iter().any(|c| c.get("id").is_some()),
        }
    }

    fn text(&self, span: std::ops::Range<usize>) -> &'a str {
        // Spans of a parsed document fall on character boundaries of valid UTF-8 runs.
        std::str::from_utf8(&self.bytes[span]).unwrap_or_default()
    }

    /// The indentation of the line `pos` is on, when `pos` starts that line's content.
    fn indent_at(&self, pos: usize) -> String {
        if self.style.indent.is_none() {
            return String::new();
        }
        let line_start = memchr::memrchr(b'\n', &self.bytes[..pos]).map_or(self.base, |i| i + 1);
        let lead = &self.bytes[line_start..pos];
        if lead.iter().all(|b| *b == b' ' || *b == b'\t') {
            String::from_utf8_lossy(lead).into_owned()
        } else {
            String::new()
        }
    }

    /// Indentation of the cells of the list, and of the list's own closing bracket.
    fn cell_levels(&self) -> (String, String) {
        let root_members = self.root.members().unwrap_or_default();
        let cells_key = root_members.iter().find(|m| m.key == "cells").map_or(self.base, |m| m.key_span.start);
        let outer = self.indent_at(cells_key);
        let inner = match self.cells().first() {
            Some(first) => self.indent_at(first.span.start),
            None => self.style.deeper(&outer),
        };
        (inner, outer)
    }

    /// Writes the text of a source in the form `like` has (a list of lines, or one string).
    fn source_value(&self, source: &str, as_lines: bool, level: &str) -> String {
        let mut out = String::new();
        if !as_lines {
            self.style.string(source, &mut out);
            return out;
        }
        let lines: Vec<&str> = source.split_inclusive('\n').collect();
        if lines.is_empty() {
            return "[]".into();
        }
        let inner = self.style.deeper(level);
        out.push('[');
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&self.style.break_at(&inner));
            self.style.string(line, &mut out);
        }
        out.push_str(&self.style.break_at(level));
        out.push(']');
        out
    }

    /// Whether the notebook's cells write their source as a list of lines (Jupyter's way).
    fn sources_as_lines(&self) -> bool {
        self.cells().iter().find_map(|c| c.get("source").map(|s| matches!(s.value, Value::Array(_)))).unwrap_or(true)
    }

    fn replace(&self, index: usize, edit: &CellEdit<'_>) -> Result<(Vec<u8>, CellEdited)> {
        let cell = &self.cells()[index];
        let members = cell.members().unwrap_or_default();
        let old_type = cell.get("cell_type").and_then(Node::as_str).unwrap_or("code").to_string();
        let new_type = edit.cell_type.unwrap_or(&old_type).to_string();
        let has_attachments = cell.get("attachments").and_then(Node::members).is_some_and(|m| !m.is_empty());
        if new_type == "code" && old_type != "code" && has_attachments {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "this cell has attachments (such as pasted images), and a code cell cannot hold attachments",
            ));
        }
        let level = members
            .first()
            .map_or_else(|| self.style.deeper(&self.indent_at(cell.span.start)), |m| self.indent_at(m.key_span.start));
        let source = cell.get("source").expect("checked at parse");
        let old_source = source.joined_text();
        let source_text = self.source_value(edit.new_source, matches!(source.value, Value::Array(_)), &level);

        // The cell's members, each kept as its bytes unless replaced; then the ones the
        // new type needs that are missing, and without the ones it must not have.
        let mut out: Vec<(String, String)> = Vec::new();
        for m in members {
            let raw_key_and_colon = self.text(m.key_span.start..m.value.span.start);
            let value = match m.key.as_str() {
                "source" => Some(source_text.clone()),
                "cell_type" if new_type != old_type => Some(self.string_value(&new_type)),
                "execution_count" | "outputs" if new_type != "code" => continue,
                "execution_count" if new_type == "code" => Some("null".into()),
                "outputs" if new_type == "code" => Some("[]".into()),
                "attachments" if new_type == "code" && !has_attachments => continue,
                _ => None,
            };
            let text = match value {
                Some(v) => format!("{raw_key_and_colon}{v}"),
                None => self.text(m.key_span.start..m.value.span.end).to_string(),
            };
            out.push((m.key.clone(), text));
        }
        if new_type == "code" {
            for (key, value) in [("execution_count", "null"), ("outputs", "[]")] {
                if !members.iter().any(|m| m.key == key) {
                    out = self.with_member(out, members, key, value);
                }
            }
        }
        let new_cell = self.object_like(cell, members, &out, &level);
        let mut doc = self.bytes.to_vec();
        doc.splice(cell.span.clone(), new_cell.into_bytes());
        let id = cell.get("id").and_then(Node::as_str).map(str::to_string).unwrap_or_else(|| format!("cell-{index}"));
        Ok((doc, edited(Some(id), index, new_type, old_source)))
    }

    fn insert(&self, index: usize, edit: &CellEdit<'_>) -> Result<(Vec<u8>, CellEdited)> {
        let Some(cell_type) = edit.cell_type else {
            return Err(Error::new(ErrorKind::InvalidInput, "cell_type is required to insert a cell"));
        };
        let cells = self.cells();
        let (cell_level, list_level) = self.cell_levels();
        let level = self.style.deeper(&cell_level);
        let id = if self.has_ids() {
            let id = edit.new_id.ok_or_else(|| {
                Error::new(ErrorKind::InvalidInput, "an inserted cell needs an id in this notebook format")
            })?;
            if cells.iter().any(|c| c.get("id").and_then(Node::as_str) == Some(id)) {
                return Err(Error::new(ErrorKind::InvalidInput, format!("a cell with id {id:?} already exists")));
            }
            Some(id.to_string())
        } else {
            None
        };
        let mut members: Vec<(&str, String)> = vec![("cell_type", self.string_value(cell_type))];
        if let Some(id) = &id {
            members.push(("id", self.string_value(id)));
        }
        members.push(("metadata", "{}".into()));
        members.push(("source", self.source_value(edit.new_source, self.sources_as_lines(), &level)));
        if cell_type == "code" {
            members.push(("execution_count", "null".into()));
            members.push(("outputs", "[]".into()));
        }
        // In the key order of a neighbour, else Jupyter's (sorted).
        let neighbour = cells.get(index).or_else(|| index.checked_sub(1).and_then(|i| cells.get(i)));
        let order: Vec<String> =
            neighbour.and_then(Node::members).map(|m| m.iter().map(|m| m.key.clone()).collect()).unwrap_or_default();
        let rank = |key: &str| order.iter().position(|k| k == key);
        if order.is_empty() || is_sorted(&order) {
            members.sort_by(|a, b| a.0.cmp(b.0));
        } else {
            members.sort_by_key(|(k, _)| rank(k).unwrap_or(usize::MAX));
        }
        let colon = self.style.colon();
        let body: Vec<String> = members
            .iter()
            .map(|(k, v)| {
                let mut key = String::new();
                self.style.string(k, &mut key);
                format!("{key}{colon}{v}")
            })
            .collect();
        let mut new_cell = String::from("{");
        for (i, m) in body.iter().enumerate() {
            if i > 0 {
                new_cell.push(',');
            }
            new_cell.push_str(&self.style.break_at(&level));
            new_cell.push_str(m);
        }
        new_cell.push_str(&self.style.break_at(&cell_level));
        new_cell.push('}');

        let list = self.root.get("cells").expect("checked at parse");
        let between = self.cell_separator(&cell_level);
        let mut doc = self.bytes.to_vec();
        if cells.is_empty() {
            let text = format!("[{}{new_cell}{}]", self.style.break_at(&cell_level), self.style.break_at(&list_level));
            doc.splice(list.span.clone(), text.into_bytes());
        } else if index < cells.len() {
            let at = cells[index].span.start;
            doc.splice(at..at, format!("{new_cell}{between}").into_bytes());
        } else {
            let at = cells[cells.len() - 1].span.end;
            doc.splice(at..at, format!("{between}{new_cell}").into_bytes());
        }
        Ok((doc, edited(id, index, cell_type.to_string(), None)))
    }

    fn delete(&self, index: usize) -> Result<(Vec<u8>, CellEdited)> {
        let cells = self.cells();
        let cell = &cells[index];
        let list = self.root.get("cells").expect("checked at parse");
        let mut doc = self.bytes.to_vec();
        if cells.len() == 1 {
            doc.splice(list.span.clone(), b"[]".iter().copied());
        } else if index + 1 < cells.len() {
            doc.drain(cell.span.start..cells[index + 1].span.start);
        } else {
            doc.drain(cells[index - 1].span.end..cell.span.end);
        }
        let id = cell.get("id").and_then(Node::as_str).map(str::to_string).unwrap_or_else(|| format!("cell-{index}"));
        let cell_type = cell.get("cell_type").and_then(Node::as_str).unwrap_or("code").to_string();
        Ok((doc, edited(Some(id), index, cell_type, cell.get("source").and_then(Node::joined_text))))
    }

    /// What separates two cells in the list: as the notebook has it, else the style's.
    fn cell_separator(&self, cell_level: &str) -> String {
        match self.cells() {
            [a, b, ..] => self.text(a.span.end..b.span.start).to_string(),
            _ => format!(",{}", self.style.break_at(cell_level)),
        }
    }

    fn string_value(&self, s: &str) -> String {
        let mut out = String::new();
        self.style.string(s, &mut out);
        out
    }

    /// `members` (key, text) plus `key: value`, at its place in the cell's key order.
    fn with_member(
        &self,
        mut out: Vec<(String, String)>,
        members: &[Member],
        key: &str,
        value: &str,
    ) -> Vec<(String, String)> {
        let keys: Vec<String> = members.iter().map(|m| m.key.clone()).collect();
        let mut text = self.string_value(key);
        text.push_str(self.style.colon());
        text.push_str(value);
        let at = if is_sorted(&keys) {
            out.iter().position(|(k, _)| k.as_str() > key).unwrap_or(out.len())
        } else {
            out.len()
        };
        out.insert(at, (key.to_string(), text));
        out
    }

    /// An object with the given member texts, laid out as `like` (an object of the
    /// document) is: its opening, its separator between members, its closing.
    fn object_like(&self, like: &Node, members: &[Member], texts: &[(String, String)], level: &str) -> String {
        let (open, sep, close) = match (members.first(), members.get(1), members.last()) {
            (Some(first), second, Some(last)) => (
                self.text(like.span.start..first.key_span.start).to_string(),
                second.map_or_else(
                    || format!(",{}", self.style.break_at(level)),
                    |s| self.text(first.value.span.end..s.key_span.start).to_string(),
                ),
                self.text(last.value.span.end..like.span.end).to_string(),
            ),
            _ => (
                format!("{{{}", self.style.break_at(level)),
                format!(",{}", self.style.break_at(level)),
                format!("{}}}", self.style.break_at(&self.indent_at(like.span.start))),
            ),
        };
        let body: Vec<&str> = texts.iter().map(|(_, t)| t.as_str()).collect();
        format!("{open}{}{close}", body.join(&sep))
    }
}

fn edited(cell_id: Option<String>, index: usize, cell_type: String, old_source: Option<String>) -> CellEdited {
    CellEdited { bytes: Vec::new(), cell_id, index, cell_type, old_source, language: String::new(), total_cells: 0 }
}

fn is_sorted(keys: &[String]) -> bool {
    keys.windows(2).all(|w| w[0] <= w[1])
}

/// Moves every span of a tree by `by` bytes (the JSON was parsed after a BOM).
fn shift(node: &mut Node, by: usize) {
    if by == 0 {
        return;
    }
    node.span = node.span.start + by..node.span.end + by;
    match &mut node.value {
        Value::Array(items) => items.iter_mut().for_each(|n| shift(n, by)),
        Value::Object(members) => {
            for m in members {
                m.key_span = m.key_span.start + by..m.key_span.end + by;
                shift(&mut m.value, by);
            }
        }
        _ => {}
    }
}

/// How the document writes JSON, read from its top-level object.
fn detect_style(bytes: &[u8], root: &Node) -> Style {
    let members = root.members().unwrap_or_default();
    let (indent, newline) = match members.first() {
        Some(first) => {
            let lead = &bytes[root.span.start + 1..first.key_span.start];
            match memchr::memrchr(b'\n', lead) {
                Some(nl) => {
                    let crlf = nl > 0 && lead[nl - 1] == b'\r';
                    (Some(String::from_utf8_lossy(&lead[nl + 1..]).into_owned()), if crlf { "\r\n" } else { "\n" })
                }
                None => (None, "\n"),
            }
        }
        None => (Some(" ".to_string()), "\n"),
    };
    let space_after_colon = members.first().is_none_or(|m| bytes[m.key_span.end..m.value.span.start].contains(&b' '));
    // Python's ensure_ascii: no byte outside ASCII, and escapes of characters outside it.
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let ascii_only = body.is_ascii()
        && memchr::memmem::find_iter(bytes, b"\\u").any(|at| {
            bytes
                .get(at + 2..at + 6)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .is_some_and(|c| c >= 0x80)
        });
    Style { indent, space_after_colon, ascii_only, newline }
}

/// The index a cell id names (`cell-N` for a cell without an id), as an insert or an edit needs it.
fn find_cell(cells: &[Node], cell_id: Option<&str>, mode: CellEditMode) -> Result<usize> {
    let Some(id) = cell_id.filter(|id| !id.is_empty()) else {
        return if mode == CellEditMode::Insert {
            Ok(0)
        } else {
            Err(Error::new(ErrorKind::InvalidInput, "cell_id is required unless inserting a new cell at the start"))
        };
    };
    let found = cells.iter().position(|c| c.get("id").and_then(Node::as_str) == Some(id));
    let index = match found {
        Some(i) => i,
        None => {
            let by_index = id.strip_prefix("cell-").and_then(|n| n.parse::<usize>().ok());
            match by_index {
                Some(i) if i < cells.len() => i,
                Some(i) => {
                    return Err(Error::new(
                        ErrorKind::NotFound,
                        format!("there is no cell {id} (cell index {i}); the notebook has {} cells", cells.len()),
                    ))
                }
                None => {
                    let ids: Vec<String> = cells
                        .iter()
                        .enumerate()
                        .take(12)
                        .map(|(i, c)| {
                            c.get("id").and_then(Node::as_str).map_or_else(|| format!("cell-{i}"), str::to_string)
                        })
                        .collect();
                    let more = if cells.len() > ids.len() { ", …" } else { "" };
                    return Err(Error::new(
                        ErrorKind::NotFound,
                        format!("no cell has the id {id:?}; the cells are {}{more}", ids.join(", ")),
                    ));
                }
            }
        }
    };
    Ok(if mode == CellEditMode::Insert { index + 1 } else { index })
}

impl Notebook<'_> {
    /// A cell as a reader shows it.
    fn view(&self, cell: &Node, index: usize, config: &NotebookConfig, cut: &mut usize) -> CellView {
        let cell_type = cell.get("cell_type").and_then(Node::as_str).unwrap_or("code").to_string();
        let mut v = CellView {
            id: cell.get("id").and_then(Node::as_str).map_or_else(|| format!("cell-{index}"), str::to_string),
            source: cell.get("source").and_then(Node::joined_text).unwrap_or_default(),
            execution_count: cell
                .get("execution_count")
                .filter(|n| matches!(n.value, Value::Number))
                .and_then(|n| self.text(n.span.clone()).parse::<i64>().ok()),
            cell_type,
            outputs: Vec::new(),
            hidden_outputs: 0,
        };
        if v.cell_type != "code" {
            return v;
        }
        for output in cell.get("outputs").and_then(Node::as_array).unwrap_or_default() {
            let output_type = output.get("output_type").and_then(Node::as_str).unwrap_or_default().to_string();
            let data = output.get("data");
            let (text, image) = match output_type.as_str() {
                "stream" => (output.get("text").and_then(Node::joined_text).unwrap_or_default(), None),
                "execute_result" | "display_data" => {
                    let text = data.and_then(|d| d.get("text/plain")).and_then(Node::joined_text).unwrap_or_default();
                    (text, data.and_then(|d| image_of(d, &config.image)))
                }
                "error" => {
                    let name = output.get("ename").and_then(Node::as_str).unwrap_or_default();
                    let value = output.get("evalue").and_then(Node::as_str).unwrap_or_default();
                    let mut lines = vec![format!("{name}: {value}")];
                    lines.extend(
                        output
                            .get("traceback")
                            .and_then(Node::as_array)
                            .unwrap_or_default()
                            .iter()
                            .filter_map(|l| l.as_str().map(str::to_string)),
                    );
                    (lines.join("\n"), None)
                }
                _ => {
                    v.hidden_outputs += 1;
                    continue;
                }
            };
            let text = without_escapes(&text);
            let (text, was_cut) = cut_middle(&text, config.max_output_chars);
            *cut += usize::from(was_cut);
            if text.is_empty() && image.is_none() {
                // An image that could not be decoded, or an output with nothing in a shown form.
                if data.is_some_and(|d| d.members().is_some_and(|m| !m.is_empty())) {
                    v.hidden_outputs += 1;
                }
                continue;
            }
            v.outputs.push(OutputView { output_type, text, image });
        }
        v
    }
}

/// The first image of an output's data that decodes, shaped like any image read.
fn image_of(data: &Node, config: &ImageConfig) -> Option<ShapedImage> {
    use base64::Engine as _;
    for mime in ["image/png", "image/jpeg", "image/gif", "image/webp"] {
        let Some(b64) = data.get(mime).and_then(Node::joined_text) else { continue };
        let clean: String = b64.chars().filter(|c| !c.is_whitespace()).collect();
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(clean) else { continue };
        let Kind::Image(format) = sniff(&bytes[..bytes.len().min(crate::sniff::SNIFF_BYTES)]) else { continue };
        if let Ok(image) = shape_image(bytes, format, config) {
            return Some(image);
        }
    }
    None
}

/// Text without terminal escape sequences (the colours of a traceback).
fn without_escapes(text: &str) -> String {
    if !text.contains('\u{1b}') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        // CSI: ESC [ parameters final-byte; other escapes: ESC and one character.
        if chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out
}

/// At most `max` characters: the start and the end around a marker when longer.
fn cut_middle(text: &str, max: usize) -> (String, bool) {
    let chars = text.chars().count();
    if chars <= max {
        return (text.to_string(), false);
    }
    let head: String = text.chars().take(max * 2 / 3).collect();
    let tail_len = max - max * 2 / 3;
    let tail: String = text.chars().skip(chars - tail_len).collect();
    let left = chars - head.chars().count() - tail_len;
    (format!("{head}\n[… {} characters of output cut …]\n{tail}", crate::page::group(left as u64)), true)
}

#[cfg(test)]
mod tests;
