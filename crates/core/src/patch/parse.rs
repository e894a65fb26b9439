//! The V4A patch text, parsed as Codex's `apply_patch` parses it: the Lark grammar of
//! [`super::LARK_GRAMMAR`] plus the leniency Codex has grown for what models really send
//! (markers padded with whitespace, a patch wrapped in a `<<'EOF'` heredoc, a first hunk
//! without its `@@`, blank lines between hunks, an empty line read as an empty context line).

/// A parsed patch: its file operations, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// The operations, in the order the patch gives them.
    pub ops: Vec<PatchOp>,
}

/// One file operation of a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchOp {
    /// `*** Add File: path` and its `+` lines: a new file (or, where the caller allows it,
    /// a file replaced whole).
    Add {
        /// The path as the patch gives it.
        path: String,
        /// The text of the `+` lines, each ended by '\n'.
        contents: String,
        /// The 1-based line of the header in the patch.
        line: usize,
    },
    /// `*** Delete File: path`.
    Delete {
        /// The path as the patch gives it.
        path: String,
        /// The 1-based line of the header in the patch.
        line: usize,
    },
    /// `*** Update File: path`, an optional `*** Move to: path`, and its hunks.
    Update {
        /// The path as the patch gives it.
        path: String,
        /// Where the updated file goes, when it moves.
        move_to: Option<String>,
        /// The hunks, in the order they apply.
        chunks: Vec<Chunk>,
        /// The 1-based line of the header in the patch.
        line: usize,
    },
}

impl PatchOp {
    /// The path the operation names first (the source of a move).
    pub fn path(&self) -> &str {
        match self {
            PatchOp::Add { path, .. } | PatchOp::Delete { path, .. } | PatchOp::Update { path, .. } => path,
        }
    }
}

/// One hunk of an update: an optional `@@ header` line that narrows where it is, then its
/// lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The text after `@@ `: a line (a function, a class) the hunk comes after.
    pub context: Option<String>,
    /// The hunk's lines, in order.
    pub lines: Vec<ChunkLine>,
    /// `*** End of File`: the removed and context lines end the file.
    pub end_of_file: bool,
    /// The 1-based line of the patch where the hunk starts.
    pub line: usize,
}

/// A line of a hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkLine {
    /// What the line does.
    pub kind: LineKind,
    /// The line without its marker.
    pub text: String,
    /// Its 1-based line in the patch.
    pub line: usize,
}

/// What a line of a hunk does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// ` ` (or an empty line): a line that stays.
    Context,
    /// `-`: a line removed.
    Removed,
    /// `+`: a line added.
    Added,
}

impl Chunk {
    /// The lines the hunk expects in the file: context and removed lines.
    pub fn old_lines(&self) -> impl Iterator<Item = &ChunkLine> {
        self.lines.iter().filter(|l| l.kind != LineKind::Added)
    }
}

/// Why a patch text is not a patch: the 1-based line at fault (0: the patch as a whole),
/// that line, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The 1-based line of the patch text (0 when the fault is the patch as a whole).
    pub line: usize,
    /// The text of that line (empty when `line` is 0).
    pub text: String,
    /// What is wrong, lowercase, without a trailing period.
    pub message: String,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF_MARKER: &str = "*** End of File";

/// Parses a patch. The whole text is trimmed; its first line must be `*** Begin Patch` and
/// its last `*** End Patch` (each may be padded with whitespace), or the patch may be
/// wrapped in a heredoc (`<<EOF`, `<<'EOF'`, `<<"EOF"` … `EOF`). A patch with no
/// operations parses (and is refused when it is applied).
pub fn parse_patch(text: &str) -> Result<Patch, ParseError> {
    let trimmed = text.trim();
    // Line numbers are of the text as given: count the lines the trim took off its start.
    let lead = text[..text.len() - text.trim_start().len()].matches('\n').count();
    let lines: Vec<&str> = trimmed.lines().collect();
    let (body, first) = boundaries(&lines, lead)?;
    let mut ops = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let (op, used) = parse_op(&body[at..], first + at)?;
        ops.push(op);
        at += used;
    }
    Ok(Patch { ops })
}

/// The lines between the markers, and the 1-based line number of the first of them.
fn boundaries<'a>(lines: &'a [&'a str], lead: usize) -> Result<(&'a [&'a str], usize), ParseError> {
    let strict = |lines: &'a [&'a str], lead: usize| -> Result<(&'a [&'a str], usize), ParseError> {
        let (first, last) = match lines {
            [] => (None, None),
            [one] => (Some(one), Some(one)),
            [first, .., last] => (Some(first), Some(last)),
        };
        match (first.map(|l| l.trim()), last.map(|l| l.trim())) {
            (Some(BEGIN), Some(END)) if lines.len() >= 2 => Ok((&lines[1..lines.len() - 1], lead + 2)),
            (Some(first), _) if first != BEGIN => Err(ParseError {
                line: lead + 1,
                text: lines[0].to_owned(),
                message: "the first line of the patch must be '*** Begin Patch'".into(),
            }),
            (None, _) => Err(ParseError { line: 0, text: String::new(), message: "the patch is empty".into() }),
            _ => Err(ParseError {
                line: lead + lines.len(),
                text: lines[lines.len() - 1].to_owned(),
                message: "the last line of the patch must be '*** End Patch'".into(),
            }),
        }
    };
    let error = match strict(lines, lead) {
        Ok(found) => return Ok(found),
        Err(e) => e,
    };
    // A patch a model wrapped in a heredoc, as it would for a shell: <<EOF … EOF.
    if let [first, .., last] = lines {
        if matches!(*first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"") && last.ends_with("EOF") && lines.len() >= 4 {
            return strict(&lines[1..lines.len() - 1], lead + 1);
        }
    }
    Err(error)
}

/// Parses one operation from the start of `lines` (whose first is line `number`): the
/// operation and how many lines it took.
fn parse_op(lines: &[&str], number: usize) -> Result<(PatchOp, usize), ParseError> {
    let header = lines[0].trim();
    if let Some(path) = header.strip_prefix(ADD) {
        let mut contents = String::new();
        let mut used = 1;
        for line in &lines[1..] {
            let Some(added) = line.strip_prefix('+') else { break };
            contents.push_str(added);
            contents.push('\n');
            used += 1;
        }
        return Ok((PatchOp::Add { path: path.to_owned(), contents, line: number }, used));
    }
    if let Some(path) = header.strip_prefix(DELETE) {
        return Ok((PatchOp::Delete { path: path.to_owned(), line: number }, 1));
    }
    if let Some(path) = header.strip_prefix(UPDATE) {
        let mut used = 1;
        let move_to = lines.get(1).and_then(|l| l.strip_prefix(MOVE)).map(str::to_owned);
        if move_to.is_some() {
            used += 1;
        }
        let mut chunks = Vec::new();
        while used < lines.len() {
            // Blank lines may separate hunks.
            if lines[used].trim().is_empty() {
                used += 1;
                continue;
            }
            if lines[used].starts_with('*') {
                break;
            }
            let (chunk, took) = parse_chunk(&lines[used..], number + used, chunks.is_empty())?;
            chunks.push(chunk);
            used += took;
        }
        if chunks.is_empty() {
            return Err(ParseError {
                line: number,
                text: lines[0].to_owned(),
                message: "this update has no hunks: add an @@ hunk with its -/+ lines".into(),
            });
        }
        return Ok((PatchOp::Update { path: path.to_owned(), move_to, chunks, line: number }, used));
    }
    Err(ParseError {
        line: number,
        text: lines[0].to_owned(),
        message: "this is not a file header; each file starts with '*** Add File: path', '*** Delete File: path' or '*** Update File: path'".into(),
    })
}

/// Parses one hunk from the start of `lines` (whose first is line `number`). The first hunk
/// of a file may leave out its `@@` line.
fn parse_chunk(lines: &[&str], number: usize, first: bool) -> Result<(Chunk, usize), ParseError> {
    let no_lines = |at: usize| ParseError {
        line: number + at,
        text: lines.get(at).copied().unwrap_or_default().to_owned(),
        message:
            "this hunk has no lines: after its @@ line, give the lines with ' ' (context), '-' (removed) or '+' (added)"
                .into(),
    };
    let (context, start) = if lines[0] == "@@" {
        (None, 1)
    } else if let Some(context) = lines[0].strip_prefix("@@ ") {
        (Some(context.to_owned()), 1)
    } else if first {
        (None, 0)
    } else {
        return Err(ParseError {
            line: number,
            text: lines[0].to_owned(),
            message: "a hunk must start with an @@ line (\"@@\" or \"@@ text of a nearby line\")".into(),
        });
    };
    if start >= lines.len() {
        return Err(no_lines(start.min(lines.len() - 1)));
    }
    let mut chunk = Chunk { context, lines: Vec::new(), end_of_file: false, line: number };
    let mut parsed = 0;
    for (i, line) in lines[start..].iter().enumerate() {
        let here = number + start + i;
        if *line == EOF_MARKER {
            if parsed == 0 {
                return Err(no_lines(start + i));
            }
            chunk.end_of_file = true;
            parsed += 1;
            break;
        }
        let (kind, text) = match line.as_bytes().first() {
            None => (LineKind::Context, ""),
            Some(b' ') => (LineKind::Context, &line[1..]),
            Some(b'+') => (LineKind::Added, &line[1..]),
            Some(b'-') => (LineKind::Removed, &line[1..]),
            Some(_) if parsed == 0 => {
                return Err(ParseError {
                    line: here,
                    text: (*line).to_owned(),
                    message: "every line of a hunk starts with ' ' (context), '-' (removed) or '+' (added)".into(),
                })
            }
            // The start of the next hunk or file.
            Some(_) => break,
        };
        chunk.lines.push(ChunkLine { kind, text: text.to_owned(), line: here });
        parsed += 1;
    }
    Ok((chunk, start + parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(text: &str) -> Vec<PatchOp> {
        parse_patch(text).unwrap().ops
    }

    fn err(text: &str) -> ParseError {
        parse_patch(text).unwrap_err()
    }

    fn kinds(chunk: &Chunk) -> String {
        chunk
            .lines
            .iter()
            .map(|l| match l.kind {
                LineKind::Context => ' ',
                LineKind::Removed => '-',
                LineKind::Added => '+',
            })
            .collect()
    }

    #[test]
    fn parses_every_operation_with_line_numbers() {
        let got = ops("*** Begin Patch\n*** Add File: a/new.txt\n+one\n+\n*** Delete File: old.txt\n*** Update File: u.py\n*** Move to: v.py\n@@ def f():\n-    pass\n+    return 1\n*** End Patch\n");
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], PatchOp::Add { path: "a/new.txt".into(), contents: "one\n\n".into(), line: 2 });
        assert_eq!(got[1], PatchOp::Delete { path: "old.txt".into(), line: 5 });
        let PatchOp::Update { path, move_to, chunks, line } = &got[2] else { panic!() };
        assert_eq!((path.as_str(), move_to.as_deref(), *line), ("u.py", Some("v.py"), 6));
        assert_eq!(chunks[0].context.as_deref(), Some("def f():"));
        assert_eq!(chunks[0].line, 8);
        assert_eq!(kinds(&chunks[0]), "-+");
        assert_eq!(chunks[0].lines[1].line, 10);
    }

    #[test]
    fn tolerates_padding_heredocs_a_missing_first_at_sign_line_and_blank_lines_between_hunks() {
        let got = ops("  \n *** Begin Patch \n  *** Update File: f.txt  \n foo\n+bar\n\n@@\n-x\n+y\n*** End Patch \n");
        let PatchOp::Update { path, chunks, .. } = &got[0] else { panic!() };
        assert_eq!(path, "f.txt");
        assert_eq!(chunks.len(), 2);
        // The empty line is the first hunk's (an empty context line), as Codex reads it.
        assert_eq!(kinds(&chunks[0]), " + ");
        assert_eq!(chunks[1].line, 7);
        for wrap in ["<<EOF", "<<'EOF'", "<<\"EOF\""] {
            let got = ops(&format!("{wrap}\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF\n"));
            assert_eq!(got, vec![PatchOp::Delete { path: "d".into(), line: 3 }]);
        }
        assert_eq!(err("<<\"EOF'\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF").line, 1);
    }

    #[test]
    fn an_empty_line_inside_a_hunk_is_an_empty_context_line_and_end_of_file_is_kept() {
        let got = ops("*** Begin Patch\n*** Update File: f\n@@ ctx\n\n a\n-b\n+c\n*** End of File\n*** End Patch");
        let PatchOp::Update { chunks, .. } = &got[0] else { panic!() };
        assert_eq!(kinds(&chunks[0]), "  -+");
        assert_eq!(chunks[0].lines[0].text, "");
        assert!(chunks[0].end_of_file);
    }

    #[test]
    fn an_empty_patch_parses_and_malformed_ones_name_the_line_at_fault() {
        assert!(ops("*** Begin Patch\n*** End Patch").is_empty());
        let e = err("bad");
        assert_eq!((e.line, e.text.as_str()), (1, "bad"));
        assert!(e.message.contains("first line"));
        let e = err("*** Begin Patch\n*** Delete File: x\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("last line"));
        let e = err("*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch");
        assert_eq!((e.line, e.text.as_str()), (2, "*** Frobnicate File: foo"));
        let e = err("*** Begin Patch\n*** Update File: t.py\n*** End Patch");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("no hunks"));
        let e = err("*** Begin Patch\n*** Update File: t\n@@\n*** End Patch");
        assert!(e.message.contains("no lines"), "{e:?}");
        let e = err("*** Begin Patch\n*** Update File: t\n@@\nbad\n*** End Patch");
        assert_eq!((e.line, e.text.as_str()), (4, "bad"));
        let e = err("*** Begin Patch\n*** Update File: t\n@@\n+a\nnot a hunk\n*** End Patch");
        assert_eq!((e.line, e.text.as_str()), (5, "not a hunk"));
        assert!(e.message.contains("@@"), "{e:?}");
        let e = err("*** Begin Patch\n*** Update File: t\n@@\n*** End of File\n*** End Patch");
        assert_eq!(e.line, 4);
        // Line numbers count the blank lines before the patch.
        assert_eq!(err("\n\n*** Begin Patch\n*** Nope\n*** End Patch").line, 4);
    }
}
