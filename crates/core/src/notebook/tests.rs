use super::*;
use crate::testutil::{tmp, wfile};

/// A notebook as Jupyter writes it: indent of one space, sorted keys, a final newline.
fn jupyter(cells: &str, minor: u32) -> String {
    format!(
        "{{\n \"cells\": [{cells}],\n \"metadata\": {{\n  \"kernelspec\": {{\n   \"display_name\": \"Python 3\",\n   \"language\": \"python\",\n   \"name\": \"python3\"\n  }},\n  \"language_info\": {{\n   \"name\": \"python\"\n  }}\n }},\n \"nbformat\": 4,\n \"nbformat_minor\": {minor}\n}}\n"
    )
}

fn png_base64() -> String {
    use base64::Engine as _;
    let img = image::RgbImage::from_pixel(3, 2, image::Rgb([200, 10, 10]));
    let mut bytes = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png).unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn sample() -> String {
    let png = png_base64();
    let cells = format!(
        r##"
  {{
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {{}},
   "source": [
    "# Title\n",
    "Some *text*."
   ]
  }},
  {{
   "cell_type": "code",
   "execution_count": 3,
   "id": "calc",
   "metadata": {{
    "tags": ["x"]
   }},
   "outputs": [
    {{
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "hello\n",
      "world\n"
     ]
    }},
    {{
     "data": {{
      "image/png": "{png}\n",
      "text/plain": [
       "<Figure>"
      ]
     }},
     "metadata": {{}},
     "output_type": "display_data"
    }},
    {{
     "data": {{
      "text/plain": [
       "42"
      ]
     }},
     "execution_count": 3,
     "metadata": {{}},
     "output_type": "execute_result"
    }},
    {{
     "ename": "ValueError",
     "evalue": "bad",
     "output_type": "error",
     "traceback": [
      "\u001b[0;31mValueError\u001b[0m: bad"
     ]
    }},
    {{
     "output_type": "widget_thing"
    }}
   ],
   "source": [
    "x = 40\n",
    "x + 2"
   ]
  }},
  {{
   "cell_type": "raw",
   "id": "tail",
   "metadata": {{}},
   "source": "raw text"
  }}
 "##
    );
    jupyter(&cells, 5)
}

fn read(doc: &str, setup: impl FnOnce(&mut NotebookConfig)) -> NotebookPage {
    let dir = tmp();
    let p = wfile(&dir, "n.ipynb", doc.as_bytes());
    let roots = Roots::new(&[&dir]).unwrap();
    let mut config = NotebookConfig::default();
    setup(&mut config);
    read_notebook(&roots, &p, &config, &Cancel::new()).unwrap()
}

fn edit(doc: &str, e: CellEdit<'_>) -> CellEdited {
    apply_cell_edit(doc.as_bytes(), &e).unwrap()
}

fn replace<'a>(id: &'a str, source: &'a str) -> CellEdit<'a> {
    CellEdit { cell_id: Some(id), new_source: source, cell_type: None, mode: CellEditMode::Replace, new_id: None }
}

/// The raw bytes of every cell of a document, by id.
fn raw_cells(doc: &[u8]) -> Vec<(String, Vec<u8>)> {
    let nb = Notebook::parse(doc).unwrap();
    nb.cells()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let id = c.get("id").and_then(Node::as_str).map_or_else(|| format!("cell-{i}"), str::to_string);
            (id, doc[c.span.clone()].to_vec())
        })
        .collect()
}

/// The document with the span of cell `i` cut out: what must not change.
fn outside_cell(doc: &[u8], i: usize) -> (Vec<u8>, Vec<u8>) {
    let nb = Notebook::parse(doc).unwrap();
    let span = nb.cells()[i].span.clone();
    (doc[..span.start].to_vec(), doc[span.end..].to_vec())
}

#[test]
fn reads_cells_outputs_and_images() {
    let page = read(&sample(), |_| {});
    assert_eq!((page.total_cells, page.first_cell, page.language.as_str()), (3, 1, "python"));
    let [md, code, raw] = &page.cells[..] else { panic!("{:?}", page.cells) };
    assert_eq!(
        (md.id.as_str(), md.cell_type.as_str(), md.source.as_str()),
        ("intro", "markdown", "# Title\nSome *text*.")
    );
    assert_eq!((code.id.as_str(), code.execution_count, code.source.as_str()), ("calc", Some(3), "x = 40\nx + 2"));
    assert_eq!(raw.source, "raw text");
    let texts: Vec<(&str, &str)> = code.outputs.iter().map(|o| (o.output_type.as_str(), o.text.as_str())).collect();
    assert_eq!(
        texts,
        [
            ("stream", "hello\nworld\n"),
            ("display_data", "<Figure>"),
            ("execute_result", "42"),
            ("error", "ValueError: bad\nValueError: bad")
        ]
    );
    let image = code.outputs[1].image.as_ref().expect("the PNG output is an image");
    assert_eq!((image.mime, image.width, image.height), ("image/png", 3, 2));
    assert_eq!(code.hidden_outputs, 1, "the widget output has nothing to show");
}

#[test]
fn pages_by_cell_and_cuts_long_outputs_around_a_marker() {
    let page = read(&sample(), |c| {
        c.offset(2).limit(1);
    });
    assert_eq!((page.first_cell, page.cells.len(), page.cells[0].id.as_str()), (2, 1, "calc"));
    let long = format!("{}{}", "a".repeat(20_000), "END");
    let doc = jupyter(
        &format!(
            r#"{{"cell_type": "code", "metadata": {{}}, "outputs": [{{"output_type": "stream", "name": "stdout", "text": "{long}"}}], "source": ""}}"#
        ),
        4,
    );
    let page = read(&doc, |c| {
        c.max_output_chars(1000);
    });
    let text = &page.cells[0].outputs[0].text;
    assert!(text.starts_with("aaa") && text.ends_with("END") && text.contains("characters of output cut"), "{text}");
    assert!(text.chars().count() < 1100);
    assert_eq!(page.cut_outputs, 1);
    assert_eq!(page.cells[0].id, "cell-0", "a cell without an id is named by its index");
    let past = read(&sample(), |c| {
        c.offset(9);
    });
    assert_eq!((past.first_cell, past.cells.len()), (0, 0));
}

#[test]
fn invalid_notebooks_are_clear_errors() {
    for (doc, says) in [
        ("{\"cells\": [", "is not valid JSON: unexpected end of the document at line 1, column 12"),
        ("[1, 2]", "no top-level \"cells\" list"),
        ("{\"cells\": {}}", "its \"cells\" is not a list"),
        ("{\"cells\": [{\"source\": 3}]}", "cell 0 has no string or string-list \"source\""),
        ("{\"cells\": [7]}", "cell 0 is not an object"),
    ] {
        let err = Notebook::parse(doc.as_bytes()).err().expect(doc);
        assert_eq!(err.kind(), ErrorKind::Notebook);
        assert!(err.message().contains(says), "{doc}: {}", err.message());
        let e = apply_cell_edit(doc.as_bytes(), &replace("x", "y")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Notebook);
    }
}

#[test]
fn replace_changes_only_the_cell() {
    let doc = sample();
    for (id, i) in [("intro", 0), ("calc", 1), ("tail", 2)] {
        let out = edit(&doc, replace(id, "new\nlines\n"));
        assert_eq!(outside_cell(doc.as_bytes(), i), outside_cell(&out.bytes, i), "{id}");
        let after = raw_cells(&out.bytes);
        for (j, (other, bytes)) in raw_cells(doc.as_bytes()).into_iter().enumerate() {
            if j != i {
                assert_eq!(after[j], (other, bytes));
            }
        }
        let nb = Notebook::parse(&out.bytes).unwrap();
        assert_eq!(nb.cells()[i].get("source").unwrap().joined_text().unwrap(), "new\nlines\n");
        assert_eq!(out.cell_id.as_deref(), Some(id));
    }
}

#[test]
fn replace_writes_in_the_notebook_style_and_resets_a_code_cell() {
    let doc = sample();
    let out = edit(&doc, replace("calc", "print(1)\nprint(2)"));
    let text = String::from_utf8(out.bytes.clone()).unwrap();
    let want = "  {\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"id\": \"calc\",\n   \"metadata\": {\n    \"tags\": [\"x\"]\n   },\n   \"outputs\": [],\n   \"source\": [\n    \"print(1)\\n\",\n    \"print(2)\"\n   ]\n  },";
    assert!(text.contains(want), "{text}");
    assert_eq!(out.old_source.as_deref(), Some("x = 40\nx + 2"));
    // A string source stays a string.
    let out = edit(&doc, replace("tail", "a\nb"));
    assert!(String::from_utf8(out.bytes).unwrap().contains("\"source\": \"a\\nb\"\n  }\n ],"));
}

#[test]
fn changing_the_type_adds_or_removes_what_a_code_cell_has() {
    let doc = sample();
    let to_md = edit(&doc, CellEdit { cell_type: Some("markdown"), ..replace("calc", "# now text") });
    let nb = Notebook::parse(&to_md.bytes).unwrap();
    let cell = &nb.cells()[1];
    assert_eq!(cell.get("cell_type").unwrap().as_str(), Some("markdown"));
    assert!(cell.get("outputs").is_none() && cell.get("execution_count").is_none());
    assert_eq!(outside_cell(doc.as_bytes(), 1), outside_cell(&to_md.bytes, 1));
    let to_code = edit(&doc, CellEdit { cell_type: Some("code"), ..replace("intro", "x = 1") });
    let text = String::from_utf8(to_code.bytes.clone()).unwrap();
    assert!(
        text.contains("   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"id\": \"intro\",\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n    \"x = 1\"\n   ]\n  },"),
        "{text}"
    );
    assert_eq!(to_code.cell_type, "code");
    let with_attachment = jupyter(
        r#"{"attachments": {"a.png": {"image/png": "AA=="}}, "cell_type": "markdown", "metadata": {}, "source": ""}"#,
        4,
    );
    let err =
        apply_cell_edit(with_attachment.as_bytes(), &CellEdit { cell_type: Some("code"), ..replace("cell-0", "x") })
            .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn insert_places_a_new_cell_in_the_style_of_its_neighbours() {
    let doc = sample();
    let insert = |after: Option<&'static str>, cell_type: &'static str| CellEdit {
        cell_id: after,
        new_source: "y = 2\n",
        cell_type: Some(cell_type),
        mode: CellEditMode::Insert,
        new_id: Some("fresh123"),
    };
    let first = edit(&doc, insert(None, "code"));
    assert_eq!(first.index, 0);
    let text = String::from_utf8(first.bytes.clone()).unwrap();
    assert!(
        text.contains(" \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"id\": \"fresh123\",\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n    \"y = 2\\n\"\n   ]\n  },\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"intro\","),
        "{text}"
    );
    let middle = edit(&doc, insert(Some("intro"), "markdown"));
    assert_eq!(middle.index, 1);
    let last = edit(&doc, insert(Some("tail"), "markdown"));
    assert_eq!(last.index, 3);
    for out in [&first, &middle, &last] {
        let ids: Vec<String> = raw_cells(&out.bytes).into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids.len(), 4);
        // Every old cell is still there byte for byte, and the rest of the file too.
        let before = raw_cells(doc.as_bytes());
        let after: Vec<_> = raw_cells(&out.bytes).into_iter().filter(|(id, _)| id != "fresh123").collect();
        assert_eq!(before, after);
        assert!(out.bytes.ends_with(b" \"nbformat_minor\": 5\n}\n"));
    }
    assert!(String::from_utf8(last.bytes)
        .unwrap()
        .contains("\"source\": \"raw text\"\n  },\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"fresh123\","));
    let err = apply_cell_edit(doc.as_bytes(), &CellEdit { cell_type: None, ..insert(None, "code") }).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let clash =
        apply_cell_edit(doc.as_bytes(), &CellEdit { new_id: Some("calc"), ..insert(None, "code") }).unwrap_err();
    assert!(clash.message().contains("already exists"));
}

#[test]
fn insert_without_ids_in_an_older_format_and_into_an_empty_notebook() {
    let old =
        jupyter(r#"{"cell_type": "code", "metadata": {}, "outputs": [], "source": [], "execution_count": null}"#, 4);
    let out = edit(
        &old,
        CellEdit {
            cell_id: Some("cell-0"),
            new_source: "z",
            cell_type: Some("code"),
            mode: CellEditMode::Insert,
            new_id: Some("unused"),
        },
    );
    let nb = Notebook::parse(&out.bytes).unwrap();
    assert!(nb.cells()[1].get("id").is_none(), "nbformat 4.4 cells have no id");
    assert_eq!(out.cell_id, None);
    let empty = jupyter("", 5);
    let out = edit(
        &empty,
        CellEdit {
            cell_id: None,
            new_source: "first",
            cell_type: Some("markdown"),
            mode: CellEditMode::Insert,
            new_id: Some("a1"),
        },
    );
    let text = String::from_utf8(out.bytes).unwrap();
    assert!(text.starts_with("{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"a1\",\n   \"metadata\": {},\n   \"source\": [\n    \"first\"\n   ]\n  }\n ],\n \"metadata\""), "{text}");
}

#[test]
fn delete_removes_the_cell_and_its_separator() {
    let doc = sample();
    for (id, i) in [("intro", 0), ("calc", 1), ("tail", 2)] {
        let out = edit(
            &doc,
            CellEdit { cell_id: Some(id), new_source: "", cell_type: None, mode: CellEditMode::Delete, new_id: None },
        );
        let mut before = raw_cells(doc.as_bytes());
        before.remove(i);
        assert_eq!(raw_cells(&out.bytes), before);
        assert!(out.old_source.is_some());
        // Nothing but the cell and one separator went.
        let gone = doc.len() - out.bytes.len();
        let span = Notebook::parse(doc.as_bytes()).unwrap().cells()[i].span.len();
        assert_eq!(gone, span + ",\n  ".len(), "{id}");
    }
    let one = jupyter(r#"{"cell_type": "markdown", "metadata": {}, "source": "x"}"#, 4);
    let out = edit(
        &one,
        CellEdit { cell_id: Some("cell-0"), new_source: "", cell_type: None, mode: CellEditMode::Delete, new_id: None },
    );
    assert!(String::from_utf8(out.bytes).unwrap().starts_with("{\n \"cells\": [],\n"));
}

#[test]
fn unknown_cells_are_not_found_with_the_ids_there_are() {
    let doc = sample();
    let err = apply_cell_edit(doc.as_bytes(), &replace("nope", "x")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.message().contains("intro, calc, tail"), "{}", err.message());
    let err = apply_cell_edit(doc.as_bytes(), &replace("cell-9", "x")).unwrap_err();
    assert!(err.message().contains("has 3 cells"), "{}", err.message());
    assert_eq!(edit(&doc, replace("cell-1", "by index")).index, 1, "cell-N names the N-th cell too");
    let err = apply_cell_edit(doc.as_bytes(), &CellEdit { cell_id: None, ..replace("x", "y") }).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn other_layouts_keep_their_own_style() {
    // One line, no spaces, a BOM, CRLF line breaks, escaped non-ASCII: each kept.
    let compact = "{\"cells\":[{\"cell_type\":\"code\",\"id\":\"a\",\"metadata\":{},\"outputs\":[],\"source\":\"x\",\"execution_count\":null}],\"metadata\":{},\"nbformat\":4,\"nbformat_minor\":5}";
    let out = edit(compact, replace("a", "é\n"));
    assert_eq!(
        String::from_utf8(out.bytes).unwrap(),
        "{\"cells\":[{\"cell_type\":\"code\",\"id\":\"a\",\"metadata\":{},\"outputs\":[],\"source\":\"é\\n\",\"execution_count\":null}],\"metadata\":{},\"nbformat\":4,\"nbformat_minor\":5}"
    );
    let crlf = "\u{feff}{\r\n  \"cells\": [\r\n    {\r\n      \"cell_type\": \"markdown\",\r\n      \"metadata\": {},\r\n      \"source\": [\"caf\\u00e9\"]\r\n    }\r\n  ],\r\n  \"nbformat\": 4,\r\n  \"nbformat_minor\": 2\r\n}\r\n";
    let out = edit(
        crlf,
        CellEdit {
            cell_id: Some("cell-0"),
            new_source: "naïve\nline",
            cell_type: Some("markdown"),
            mode: CellEditMode::Insert,
            new_id: None,
        },
    );
    let text = String::from_utf8(out.bytes).unwrap();
    assert!(text.starts_with("\u{feff}{\r\n  \"cells\": [\r\n    {"));
    assert!(text.contains("    },\r\n    {\r\n      \"cell_type\": \"markdown\",\r\n      \"metadata\": {},\r\n      \"source\": [\r\n        \"na\\u00efve\\n\",\r\n        \"line\"\r\n      ]\r\n    }\r\n  ],"), "{text}");
    assert!(text.ends_with("}\r\n"));
}

#[test]
fn edits_on_disk_are_atomic_and_check_the_version() {
    let dir = tmp();
    let doc = sample();
    let p = wfile(&dir, "n.ipynb", doc.as_bytes());
    let roots = Roots::new(&[&dir]).unwrap();
    let mut config = WriteConfig::default();
    config.expect(Expect::Version { size: doc.len() as u64, hash: hash_bytes(doc.as_bytes()) }).keep_previous(true);
    let (written, out) =
        edit_notebook(&roots, &p, &p, &replace("intro", "changed"), &config, u64::MAX, &Cancel::new()).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), out.bytes);
    assert_eq!(written.previous.as_deref(), Some(doc.as_bytes()));
    // The same expectation again: the file is not that version any more.
    let err = edit_notebook(&roots, &p, &p, &replace("intro", "again"), &config, u64::MAX, &Cancel::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Stale);
    assert_eq!(std::fs::read(&p).unwrap(), out.bytes, "a refused edit writes nothing");
    // An invalid notebook is refused and left as it was.
    let bad = wfile(&dir, "bad.ipynb", b"{\"cells\": [");
    let err = edit_notebook(&roots, &bad, &bad, &replace("x", "y"), &WriteConfig::default(), u64::MAX, &Cancel::new())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Notebook);
    assert_eq!(std::fs::read(&bad).unwrap(), b"{\"cells\": [");
}
