//! apply_patch from the patch text to the disk.

use super::*;
use crate::testutil::tree;
use std::path::Path;

fn roots(dir: &Path) -> Roots {
    Roots::new(&[dir]).unwrap()
}

/// Applies `text` in `dir`, each path taken as it is under `dir`, Adds expecting no file
/// unless `read` lists it (then its current version).
fn run(dir: &Path, text: &str, read: &[&str]) -> PatchOutcome {
    let patch = parse_patch(text).unwrap();
    let expect_of = |rel: &str| {
        if read.contains(&rel) {
            commit::version_of(&std::fs::read(dir.join(rel)).unwrap())
        } else if dir.join(rel).exists() {
            Expect::Any
        } else {
            Expect::Absent
        }
    };
    let targets: Vec<OpTarget> = patch
        .ops
        .iter()
        .map(|op| {
            let (path, move_to) = match op {
                PatchOp::Update { path, move_to, .. } => (path.as_str(), move_to.as_deref()),
                other => (other.path(), None),
            };
            let expect = match op {
                PatchOp::Add { path, .. } => expect_of(path),
                PatchOp::Update { move_to: Some(to), .. } => expect_of(to),
                _ => Expect::Any,
            };
            OpTarget {
                path: dir.join(path),
                move_to: move_to.map(|m| dir.join(m)),
                expect,
                label: path.to_owned(),
                move_label: move_to.map(str::to_owned),
            }
        })
        .collect();
    apply_patch(&roots(dir), &patch, &targets, &PatchConfig::default(), &Cancel::new()).unwrap()
}

fn done(outcome: PatchOutcome) -> (Vec<OpSummary>, Vec<FileResult>) {
    match outcome {
        PatchOutcome::Done { ops, files } => (ops, files),
        PatchOutcome::Failed(f) => panic!("failed: {f:?}"),
        PatchOutcome::Checked => panic!("a dry run where a patch was meant"),
    }
}

fn read(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap()
}

fn canonical(files: &[(&str, &str)]) -> std::path::PathBuf {
    std::fs::canonicalize(tree(files)).unwrap()
}

#[test]
fn adds_updates_moves_and_deletes_in_one_patch() {
    let dir =
        canonical(&[("modify.txt", "line1\nline2\n"), ("delete.txt", "obsolete\n"), ("old/name.txt", "old content\n")]);
    let (ops, files) = done(run(
        &dir,
        "*** Begin Patch\n*** Add File: nested/new.txt\n+created\n*** Delete File: delete.txt\n*** Update File: modify.txt\n@@\n-line2\n+changed\n*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-old content\n+new content\n*** End Patch\n",
        &[],
    ));
    assert_eq!(
        ops.iter().map(|o| o.action).collect::<Vec<_>>(),
        [Action::Added, Action::Deleted, Action::Updated, Action::Moved]
    );
    assert_eq!((ops[2].added, ops[2].removed), (1, 1));
    assert!(ops[2].diff.contains("-line2\n+changed\n"), "{}", ops[2].diff);
    assert!(ops[3].diff.starts_with("--- a/old/name.txt\n+++ b/renamed/dir/name.txt\n"), "{}", ops[3].diff);
    assert_eq!(files.len(), 5);
    assert_eq!(read(&dir, "nested/new.txt"), b"created\n");
    assert_eq!(read(&dir, "modify.txt"), b"line1\nchanged\n");
    assert_eq!(read(&dir, "renamed/dir/name.txt"), b"new content\n");
    assert!(!dir.join("delete.txt").exists() && !dir.join("old/name.txt").exists());
    let removed = files.iter().find(|f| f.change.real.ends_with("delete.txt")).unwrap();
    assert!(removed.change.written.is_none());
    assert_eq!(removed.change.previous.as_deref(), Some(&b"obsolete\n"[..]));
}

#[test]
fn a_failing_operation_leaves_every_file_as_it_was() {
    let dir = canonical(&[("a.txt", "a\n")]);
    let outcome = run(&dir, "*** Begin Patch\n*** Add File: created.txt\n+hello\n*** Update File: a.txt\n@@\n-a\n+b\n*** Update File: missing.txt\n@@\n-old\n+new\n*** End Patch", &[]);
    match outcome {
        PatchOutcome::Failed(PatchFailure::File { op, error }) => {
            assert_eq!(op, 2);
            assert_eq!(error.kind(), ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
    assert!(!dir.join("created.txt").exists());
    assert_eq!(read(&dir, "a.txt"), b"a\n");
    let outcome = run(
        &dir,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Update File: a.txt\n@@\n-zzz\n+c\n*** End Patch",
        &[],
    );
    assert!(matches!(outcome, PatchOutcome::Failed(PatchFailure::Hunk { op: 1, .. })), "{outcome:?}");
    assert_eq!(read(&dir, "a.txt"), b"a\n");
}

#[test]
fn later_operations_see_earlier_ones_and_an_empty_patch_is_refused() {
    let dir = canonical(&[("a.txt", "one\n")]);
    done(run(&dir, "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** Update File: a.txt\n@@\n-two\n+three\n*** End Patch", &[]));
    assert_eq!(read(&dir, "a.txt"), b"three\n");
    done(run(&dir, "*** Begin Patch\n*** Add File: b.txt\n+x\n*** Delete File: b.txt\n*** End Patch", &[]));
    assert!(!dir.join("b.txt").exists());
    assert!(matches!(run(&dir, "*** Begin Patch\n*** End Patch", &[]), PatchOutcome::Failed(PatchFailure::Empty)));
}

#[test]
fn an_add_over_an_existing_file_needs_its_version_and_a_move_overwrites_only_a_version_read() {
    let dir = canonical(&[("dup.txt", "old\n"), ("src.txt", "from\n"), ("dst.txt", "existing\n")]);
    let refused = |outcome: PatchOutcome| match outcome {
        PatchOutcome::Failed(PatchFailure::File { error, .. }) => assert_eq!(error.kind(), ErrorKind::Exists),
        other => panic!("{other:?}"),
    };
    // Expecting no file: refused.
    let patch = parse_patch("*** Begin Patch\n*** Add File: dup.txt\n+new\n*** End Patch").unwrap();
    let target = OpTarget {
        path: dir.join("dup.txt"),
        move_to: None,
        expect: Expect::Absent,
        label: "dup.txt".into(),
        move_label: None,
    };
    refused(apply_patch(&roots(&dir), &patch, &[target], &PatchConfig::default(), &Cancel::new()).unwrap());
    done(run(&dir, "*** Begin Patch\n*** Add File: dup.txt\n+new\n*** End Patch", &["dup.txt"]));
    assert_eq!(read(&dir, "dup.txt"), b"new\n");
    let patch =
        parse_patch("*** Begin Patch\n*** Update File: src.txt\n*** Move to: dst.txt\n@@\n-from\n+to\n*** End Patch")
            .unwrap();
    let target = OpTarget {
        path: dir.join("src.txt"),
        move_to: Some(dir.join("dst.txt")),
        expect: Expect::Absent,
        label: "src.txt".into(),
        move_label: Some("dst.txt".into()),
    };
    refused(apply_patch(&roots(&dir), &patch, &[target], &PatchConfig::default(), &Cancel::new()).unwrap());
    done(run(
        &dir,
        "*** Begin Patch\n*** Update File: src.txt\n*** Move to: dst.txt\n@@\n-from\n+to\n*** End Patch",
        &["dst.txt"],
    ));
    assert_eq!(read(&dir, "dst.txt"), b"to\n");
    assert!(!dir.join("src.txt").exists());
}

#[test]
fn keeps_the_files_encoding_bom_and_line_endings() {
    let dir = canonical(&[]);
    let utf16: Vec<u8> =
        [0xFF, 0xFE].into_iter().chain("a\r\nb\r\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
    std::fs::write(dir.join("w.txt"), &utf16).unwrap();
    std::fs::write(dir.join("bom.txt"), b"\xEF\xBB\xBFx\ny\n").unwrap();
    done(run(&dir, "*** Begin Patch\n*** Update File: w.txt\n@@\n a\n-b\n+c\n+d\n*** Update File: bom.txt\n@@\n-y\n+z\n*** End Patch", &[]));
    let want: Vec<u8> =
        [0xFF, 0xFE].into_iter().chain("a\r\nc\r\nd\r\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
    assert_eq!(read(&dir, "w.txt"), want);
    assert_eq!(read(&dir, "bom.txt"), b"\xEF\xBB\xBFx\nz\n");
}

#[test]
fn a_file_that_is_not_text_or_a_folder_is_refused_with_nothing_written() {
    let dir = canonical(&[("dir/foo.txt", "stable\n"), ("ok.txt", "a\n")]);
    std::fs::write(dir.join("bin.dat"), b"\x00\x01\x02binary").unwrap();
    let outcome = run(
        &dir,
        "*** Begin Patch\n*** Update File: ok.txt\n@@\n-a\n+b\n*** Update File: bin.dat\n@@\n-x\n+y\n*** End Patch",
        &[],
    );
    assert!(
        matches!(&outcome, PatchOutcome::Failed(PatchFailure::File { op: 1, error }) if error.kind() == ErrorKind::Encoding),
        "{outcome:?}"
    );
    let outcome = run(&dir, "*** Begin Patch\n*** Delete File: dir\n*** End Patch", &[]);
    assert!(
        matches!(&outcome, PatchOutcome::Failed(PatchFailure::File { op: 0, error }) if error.kind() == ErrorKind::IsDirectory),
        "{outcome:?}"
    );
    assert_eq!(read(&dir, "ok.txt"), b"a\n");
}

#[test]
fn a_failure_while_writing_puts_back_the_files_already_changed() {
    let dir = canonical(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")]);
    crate::write::fail_install(2);
    let outcome = run(&dir, "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: c.txt\n*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch", &[]);
    match outcome {
        PatchOutcome::Failed(PatchFailure::Commit(failure)) => {
            assert!(failure.real.ends_with("b.txt"));
            assert!(failure.on_disk.iter().all(|(_, s)| *s == OnDisk::Old));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        (read(&dir, "a.txt"), read(&dir, "b.txt"), read(&dir, "c.txt")),
        (b"a\n".to_vec(), b"b\n".to_vec(), b"c\n".to_vec())
    );
}

/// A move is a rename: the file keeps its mode (an executable stays executable, a private
/// file private), over a new path or an existing one.
#[cfg(unix)]
#[test]
fn a_moved_file_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = canonical(&[("run.sh", "#!/bin/sh\necho hi\n"), ("key.txt", "secret\n"), ("there.txt", "old\n")]);
    let mode = |rel: &str| std::fs::metadata(dir.join(rel)).unwrap().permissions().mode() & 0o777;
    std::fs::set_permissions(dir.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir.join("key.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(dir.join("there.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
    done(run(
        &dir,
        "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n-echo hi\n+echo hello\n*** Update File: key.txt\n*** Move to: there.txt\n@@\n-secret\n+secret2\n*** End Patch",
        &["there.txt"],
    ));
    assert_eq!(read(&dir, "bin/run.sh"), b"#!/bin/sh\necho hello\n");
    assert_eq!((mode("bin/run.sh"), mode("there.txt")), (0o755, 0o600));
}

#[test]
fn a_dry_run_checks_every_operation_and_writes_nothing() {
    let dir = canonical(&[("a.txt", "alpha\n")]);
    let patch = parse_patch(
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+beta\n*** Add File: b.txt\n+new\n*** End Patch",
    )
    .unwrap();
    let targets = [
        OpTarget {
            path: dir.join("a.txt"),
            move_to: None,
            expect: Expect::Any,
            label: "a.txt".into(),
            move_label: None,
        },
        OpTarget {
            path: dir.join("b.txt"),
            move_to: None,
            expect: Expect::Absent,
            label: "b.txt".into(),
            move_label: None,
        },
    ];
    let mut config = PatchConfig::default();
    config.dry_run(true);
    let outcome = apply_patch(&roots(&dir), &patch, &targets, &config, &Cancel::new()).unwrap();
    assert!(matches!(outcome, PatchOutcome::Checked), "{outcome:?}");
    assert_eq!(read(&dir, "a.txt"), b"alpha\n");
    assert!(!dir.join("b.txt").exists());
    // A hunk that does not apply fails the dry run as it would the patch.
    let bad = parse_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-gamma\n+beta\n*** End Patch").unwrap();
    let outcome = apply_patch(&roots(&dir), &bad, &targets[..1], &config, &Cancel::new()).unwrap();
    assert!(matches!(outcome, PatchOutcome::Failed(PatchFailure::Hunk { op: 0, .. })), "{outcome:?}");
}
