//! The live index against the walk: the same results, fresh after every change.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::testutil::tree;
use crate::walk::{Filter, WalkConfig};
use crate::{
    glob_files, grep, list_directory, rank_folder, Cancel, CodeIndex, GlobConfig, GlobOrder, GrepConfig, GrepMode,
    GrepOutcome, ListConfig, Listing, RankConfig, Roots,
};

fn ready(dir: &Path) -> Arc<LiveIndex> {
    let index = Arc::new(LiveIndex::new(dir, INDEX_BYTES));
    index.start();
    assert!(index.wait_ready(Duration::from_secs(20)));
    assert_eq!(index.status().state, IndexState::Ready, "{:?}", index.status());
    index
}

fn search(dir: &Path, pattern: &str, index: Option<&Arc<LiveIndex>>, setup: impl Fn(&mut GrepConfig)) -> GrepOutcome {
    let roots = Roots::new(&[dir]).unwrap();
    let mut config = GrepConfig::default();
    config.mode(GrepMode::Content).live(index.cloned());
    setup(&mut config);
    grep(&roots, dir, dir, pattern, &config, &Cancel::new()).unwrap()
}

/// Searches with and without the index and checks they agree; returns the indexed one.
fn same(dir: &Path, index: &Arc<LiveIndex>, pattern: &str, setup: impl Fn(&mut GrepConfig)) -> GrepOutcome {
    let walked = search(dir, pattern, None, &setup);
    let indexed = search(dir, pattern, Some(index), &setup);
    assert!(indexed.from_index, "the index answered {pattern:?}");
    assert_eq!(indexed.text, walked.text, "{pattern:?}");
    assert_eq!(indexed.matches, walked.matches, "{pattern:?}");
    assert_eq!(indexed.binary_files, walked.binary_files, "{pattern:?}");
    indexed
}

fn files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("src/visitor.rs", "struct NodeVisitor;\nimpl Visitor for NodeVisitor {}\n"),
        ("src/main.rs", "fn main() { println!(\"hello\"); }\n"),
        ("src/.hidden.rs", "struct HiddenVisitor;\n"),
        (".config/tool.toml", "visitor = true\n"),
        ("docs/readme.md", "# Hello World\nThe VISITOR pattern.\n"),
        ("build/out.js", "var NodeVisitor = 1;\n"),
        (".gitignore", "build/\n"),
        ("bin.dat", "Visitor\0after the nul: SecretVisitor\n"),
    ]
}

#[test]
fn the_index_answers_as_the_walk_does() {
    let dir = std::fs::canonicalize(tree(&files())).unwrap();
    let index = ready(&dir);
    let out = same(&dir, &index, r"\w+Visitor\b", |_| {});
    assert!(out.files_read < 5, "read {} files", out.files_read);
    same(&dir, &index, "visitor", |c| {
        c.case_insensitive(true);
    });
    same(&dir, &index, "Visitor|hello", |c| {
        c.walk().include_hidden(true);
    });
    same(&dir, &index, "Visitor", |c| {
        c.walk().file_type(Some("rust"));
    });
    same(&dir, &index, "Visitor", |c| {
        c.walk().globs(&["*.md", "!docs"]);
    });
    same(&dir, &index, "after the nul", |c| {
        c.multiline(true);
    });
    same(&dir, &index, "a.c", |_| {});
    // A folder of a few files is walked: that costs less than the sync with the watcher.
    let sub = search(&dir.join("src"), "Visitor", Some(&index), |_| {});
    assert!(!sub.from_index && sub.matches == 2, "{sub:?}");
}

#[test]
fn a_search_sees_every_change_made_before_it() {
    let dir = std::fs::canonicalize(tree(&files())).unwrap();
    let index = ready(&dir);
    std::fs::write(dir.join("src/new.rs"), "struct FreshVisitor;\n").unwrap();
    assert!(same(&dir, &index, "FreshVisitor", |_| {}).text.contains("src/new.rs"));
    std::fs::write(dir.join("src/new.rs"), "struct Changed;\n").unwrap();
    assert_eq!(same(&dir, &index, "FreshVisitor", |_| {}).matches, 0);
    std::fs::File::create(dir.join("src/visitor.rs")).unwrap();
    assert!(!same(&dir, &index, "NodeVisitor", |_| {}).text.contains("visitor.rs"));
    std::fs::create_dir_all(dir.join("deep/er")).unwrap();
    std::fs::write(dir.join("deep/er/f.txt"), "DeepVisitor\n").unwrap();
    assert_eq!(same(&dir, &index, "DeepVisitor", |_| {}).matches, 1);
    std::fs::rename(dir.join("deep"), dir.join("moved")).unwrap();
    assert!(same(&dir, &index, "DeepVisitor", |_| {}).text.contains("moved/er/f.txt"));
    std::fs::remove_dir_all(dir.join("moved")).unwrap();
    assert_eq!(same(&dir, &index, "DeepVisitor", |_| {}).matches, 0);
    std::fs::write(dir.join(".gitignore"), "").unwrap();
    assert!(same(&dir, &index, "NodeVisitor", |_| {}).text.contains("build/out.js"));
    std::fs::write(dir.join(".gitignore"), "src/\n").unwrap();
    assert!(!same(&dir, &index, "Visitor", |_| {}).text.contains("src/"));
}

#[cfg(unix)]
#[test]
fn a_folder_swapped_for_a_link_shows_nothing_through_it() {
    let dir = std::fs::canonicalize(tree(&files())).unwrap();
    let outside = std::fs::canonicalize(tree(&[("secret.rs", "SecretVisitor\n")])).unwrap();
    let index = ready(&dir);
    std::fs::rename(dir.join("src"), dir.join("src.old")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("src")).unwrap();
    let out = same(&dir, &index, "Visitor", |_| {});
    assert!(!out.text.contains("Secret"), "{}", out.text);
}

#[test]
fn a_lost_or_overflowed_watcher_falls_back_and_recovers() {
    let dir = std::fs::canonicalize(tree(&files())).unwrap();
    let index = ready(&dir);
    index.overflow_watcher();
    std::fs::write(dir.join("after.rs"), "OverflowVisitor\n").unwrap();
    assert_eq!(same(&dir, &index, "OverflowVisitor", |_| {}).matches, 1);
    index.kill_watcher();
    std::fs::write(dir.join("later.rs"), "LostVisitor\n").unwrap();
    let out = search(&dir, "LostVisitor", Some(&index), |_| {});
    assert!(!out.from_index && out.matches == 1);
    assert!(index.wait_ready(Duration::from_secs(20)));
    assert_eq!(same(&dir, &index, "LostVisitor", |_| {}).matches, 1);
}

#[test]
fn an_index_over_its_budget_is_off_and_searches_walk() {
    let dir = std::fs::canonicalize(tree(&files())).unwrap();
    let index = Arc::new(LiveIndex::new(&dir, 1024));
    index.start();
    assert!(index.wait_ready(Duration::from_secs(20)));
    assert!(matches!(index.status().state, IndexState::Off(ref why) if why.contains("limits.indexBytes")));
    let out = search(&dir, "Visitor", Some(&index), |_| {});
    assert!(!out.from_index && out.matches > 0);
}

#[test]
fn close_frees_the_index() {
    let dir = std::fs::canonicalize(tree(&files())).unwrap();
    let index = ready(&dir);
    assert!(index.status().bytes > 0);
    index.close();
    assert_eq!(index.status().bytes, 0);
    assert!(!search(&dir, "Visitor", Some(&index), |_| {}).from_index);
}

#[test]
fn a_glob_lists_the_snapshot_as_the_walk_would() {
    let dir = std::fs::canonicalize(tree(&files())).unwrap();
    let index = ready(&dir);
    let roots = Roots::new(&[&dir]).unwrap();
    for (pattern, order, hidden, offset) in [
        ("**/*", GlobOrder::Path, false, 0),
        ("*.rs", GlobOrder::Path, true, 0),
        ("**/*", GlobOrder::Newest, false, 0),
        ("**/*", GlobOrder::Path, true, 2),
    ] {
        let run = |live: Option<Arc<LiveIndex>>| {
            let mut config = GlobConfig::default();
            config.order(order).offset(offset).limit(3).live(live).walk().include_hidden(hidden);
            glob_files(&roots, &dir, &dir, pattern, &config, &Cancel::new()).unwrap()
        };
        let (walked, listed) = (run(None), run(Some(index.clone())));
        assert!(listed.from_index && !walked.from_index);
        assert_eq!((&listed.paths, listed.total), (&walked.paths, walked.total), "{pattern} {order:?} {hidden}");
    }
}

#[test]
fn the_ranker_is_offered_the_snapshot_as_the_walk_would_offer_it() {
    let dir = std::fs::canonicalize(tree(&files())).unwrap();
    let index = ready(&dir);
    let roots = Roots::new(&[&dir]).unwrap();
    let run = |live: Option<Arc<LiveIndex>>| {
        let mut config = RankConfig::default();
        config.top_k(25).live(live);
        rank_folder(&roots, &dir, &dir, "node visitor", &config, &CodeIndex::default(), &Cancel::new()).unwrap()
    };
    let (walked, listed) = (run(None), run(Some(index.clone())));
    assert!(listed.from_index && !walked.from_index);
    assert_eq!(listed.hits, walked.hits);
    assert_eq!((listed.files_considered, listed.total), (walked.files_considered, walked.total));
    assert!(!listed.hits.is_empty());
    // A file written since is offered at once.
    std::fs::write(dir.join("src/late.rs"), "struct LateNodeVisitor;\n").unwrap();
    let (walked, listed) = (run(None), run(Some(index)));
    assert!(listed.from_index);
    assert_eq!(listed.hits, walked.hits);
    assert!(listed.hits.iter().any(|h| h.shown == "src/late.rs"));
}

/// A deep listing with the index and without, which must agree; returns the indexed one.
fn same_listing(dir: &Path, index: &Arc<LiveIndex>, setup: impl Fn(&mut ListConfig)) -> Listing {
    let roots = Roots::new(&[dir]).unwrap();
    let run = |live: Option<Arc<LiveIndex>>| {
        let mut config = ListConfig::default();
        config.depth(crate::list::DEEP).live(live);
        setup(&mut config);
        list_directory(&roots, dir, &config, &Cancel::new()).unwrap()
    };
    let (walked, listed) = (run(None), run(Some(index.clone())));
    assert!(listed.from_index && !walked.from_index);
    let view = |l: &Listing| -> Vec<String> {
        let entry = |e: &crate::Entry| format!("{} {:?} {} {} {:?}", e.path, e.kind, e.depth, e.size, e.link_target);
        l.entries.iter().map(entry).collect()
    };
    assert_eq!(view(&listed), view(&walked));
    assert_eq!((listed.total, listed.dirs, listed.files), (walked.total, walked.dirs, walked.files));
    listed
}

#[test]
fn a_deep_listing_is_the_snapshot_as_the_walk_would_list_it() {
    let mut files = files();
    files.extend([
        ("src/deep/er/x.rs", "x"),
        ("empty/.keep", ""),
        (".github/workflows/ci.yml", "on: push"),
        ("notes/.gitignore", "!.draft\n!.cache/\n"),
        ("notes/.draft", "draft"),
        ("notes/.cache/sub/a.txt", "a"),
    ]);
    let dir = std::fs::canonicalize(tree(&files)).unwrap();
    std::fs::create_dir_all(dir.join("bare/inner")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("../src", dir.join("docs/src-link")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join(".hidden-link")).unwrap();
    }
    let index = ready(&dir);
    let all = same_listing(&dir, &index, |_| {});
    assert!(all.entries.iter().any(|e| e.path == "bare/inner"), "empty folders are listed");
    assert!(all.entries.iter().any(|e| e.path == "notes/.draft"), "a hidden file let in by a rule");
    assert!(all.entries.iter().any(|e| e.path == "notes/.cache/sub"), "a hidden folder let in by a rule");
    same_listing(&dir, &index, |c| {
        c.walk().include_hidden(true);
    });
    same_listing(&dir, &index, |c| {
        c.dirs_first(true).offset(2).limit(4);
    });
    same_listing(&dir, &index, |c| {
        c.walk().include_hidden(true).globs(&["!src", "!*.md"]);
    });
    // Changes made since are listed at once.
    std::fs::create_dir_all(dir.join("src/new")).unwrap();
    std::fs::write(dir.join("src/new/y.rs"), "y").unwrap();
    std::fs::remove_dir_all(dir.join("bare")).unwrap();
    let after = same_listing(&dir, &index, |_| {});
    assert!(after.entries.iter().any(|e| e.path == "src/new/y.rs"));
    assert!(!after.entries.iter().any(|e| e.path.starts_with("bare")));
    // A shallow listing walks.
    let roots = Roots::new(&[&dir]).unwrap();
    let mut config = ListConfig::default();
    config.depth(crate::list::DEEP - 1).live(Some(index));
    assert!(!list_directory(&roots, &dir, &config, &Cancel::new()).unwrap().from_index);
}

#[test]
fn a_folder_replaced_by_a_file_of_its_name_is_seen() {
    let dir = std::fs::canonicalize(tree(&[("a/f.txt", "needle\n"), ("b.txt", "x\n")])).unwrap();
    let index = ready(&dir);
    std::fs::remove_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("a"), "needle\n").unwrap();
    assert!(same(&dir, &index, "needle", |_| {}).text.starts_with("a:1:"));
    assert!(same(&dir, &index, "needle", |_| {}).text.starts_with("a:1:"));
}

/// Times the parts of a query on a real tree: `FSGATE_PROBE=/path cargo test --profile
/// checkout -p fsgate-core live::tests::probe -- --ignored --nocapture`.
#[test]
#[ignore]
fn probe() {
    let Ok(root) = std::env::var("FSGATE_PROBE") else { return };
    let dir = std::fs::canonicalize(root).unwrap();
    let index = ready(&dir);
    let walk = WalkConfig::default();
    let filter = Filter::new(&walk).unwrap();
    for (name, query) in [("all", Query::All), ("sel", plan::plan("useSyncExternalStore", false, false))] {
        let t = std::time::Instant::now();
        for _ in 0..20 {
            assert!(index.inner.sync());
        }
        let sync = t.elapsed() / 20;
        let t = std::time::Instant::now();
        let mut n = 0;
        for _ in 0..20 {
            n = index
                .select(
                    &dir,
                    &Want { walk: &walk, filter: &filter, query: query.clone(), longest: None, multiline: false },
                )
                .unwrap()
                .files
                .len();
        }
        let select = t.elapsed() / 20;
        let tree = index.inner.tree.read().unwrap();
        let t = std::time::Instant::now();
        let ids = tree.as_ref().unwrap().eval(&query).map_or(0, |v| v.len());
        eprintln!("{name}: sync {sync:?}, select {select:?} ({n} files), eval {:?} ({ids} ids)", t.elapsed());
    }
    let t = std::time::Instant::now();
    let out = search(&dir, "useSyncExternalStore", Some(&index), |c| {
        c.mode(GrepMode::Files);
    });
    eprintln!("grep {:?} read {} matched {}", t.elapsed(), out.files_read, out.matched_files);
}

// Found by review.

/// `!.github/` lets a hidden folder in (rg --no-require-git lists it); a file created
/// there after the build must be shown as the walk shows it.
#[test]
fn a_new_file_in_a_hidden_folder_let_in_by_a_rule_is_shown() {
    let dir = std::fs::canonicalize(tree(&[
        (".gitignore", "!.github/\n"),
        (".github/ci.yml", "needle\n"),
        ("top.txt", "needle\n"),
    ]))
    .unwrap();
    let index = ready(&dir);
    assert!(same(&dir, &index, "needle", |_| {}).text.contains(".github/ci.yml"));
    std::fs::write(dir.join(".github/new.yml"), "needle\n").unwrap();
    assert!(same(&dir, &index, "needle", |_| {}).text.contains(".github/new.yml"));
}

/// A repository inside a workspace that is not one (a clone, a submodule): a change
/// in it relists its folder with the walk's rules as seen from there (`require_git` of
/// the subfolder, not of the workspace), and a file the workspace's `*.log` hides comes in.
#[test]
fn a_change_in_a_nested_repository_keeps_the_workspace_rules() {
    let dir = std::fs::canonicalize(tree(&[
        (".gitignore", "*.log\n"),
        ("sub/a.log", "needle\n"),
        ("sub/deep/b.log", "needle\n"),
        ("top.txt", "needle\n"),
    ]))
    .unwrap();
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(dir.join("sub")).status().unwrap();
    assert!(git.success());
    let index = ready(&dir);
    same(&dir, &index, "needle", |_| {});
    std::fs::write(dir.join("sub/new.txt"), "other\n").unwrap();
    same(&dir, &index, "needle", |_| {});
}

/// The workspace is a folder of a larger tree: an ignore file above it is read by the
/// walk (`parents`), and an edit of it must be seen as one inside is.
#[test]
fn an_ignore_file_above_the_workspace_edited_is_seen() {
    let top = std::fs::canonicalize(tree(&[("ws/a.log", "needle\n"), ("ws/b.txt", "needle\n")])).unwrap();
    let dir = top.join("ws");
    let index = ready(&dir);
    same(&dir, &index, "needle", |_| {});
    std::fs::write(top.join(".gitignore"), "*.log\n").unwrap();
    assert!(!same(&dir, &index, "needle", |_| {}).text.contains("a.log"));
}

/// close() right after start(): the build thread installs its watcher after close()
/// dropped none, so an inotify instance and its thread outlive the close.
#[test]
fn close_during_the_build_stops_the_watcher() {
    let mut files: Vec<(String, &str)> = (0..400).map(|i| (format!("d{i}/e/f.txt"), "x\n")).collect();
    files.push(("top.txt".into(), "x\n"));
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let dir = std::fs::canonicalize(tree(&files)).unwrap();
    let index = LiveIndex::new(&dir, INDEX_BYTES);
    index.start();
    index.close();
    std::thread::sleep(Duration::from_millis(1500));
    std::fs::write(dir.join("after.txt"), "y\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(index.inner.watch.lock().unwrap().is_none(), "a watcher outlives close()");
    assert_eq!(index.status().events, 0);
}

/// A folder swapped for another of its name (`mv src src.old && mv src.new src`, an
/// atomic swap): the relist of the parent finds `src` among the folders it knows and does
/// not look inside, so the snapshot keeps the old folder's files and trigrams.
#[test]
fn a_folder_swapped_for_another_of_its_name_is_read_again() {
    let dir = std::fs::canonicalize(tree(&[("src/f.txt", "OldNeedle\n"), ("top.txt", "x\n")])).unwrap();
    let staging = std::fs::canonicalize(tree(&[("f.txt", "NewNeedle\n"), ("g.txt", "NewNeedle\n")])).unwrap();
    let index = ready(&dir);
    std::fs::rename(dir.join("src"), dir.join("src.old")).unwrap();
    std::fs::rename(&staging, dir.join("src")).unwrap();
    assert_eq!(same(&dir, &index, "NewNeedle", |_| {}).matches, 2);
}

/// Two searches at once, each started after a write: each must see it. A sync that
/// finds nothing pending answers at once, while another search holds the changes it
/// took from the watcher and has not yet applied them (they are taken under the watch
/// lock and applied under the tree lock, with a gap between).
#[test]
fn searches_at_once_each_see_a_change_made_before_them() {
    let dir = std::fs::canonicalize(tree(&[("a.txt", "x\n")])).unwrap();
    let index = ready(&dir);
    for i in 0..2000 {
        let word = format!("Fresh{i}Needle");
        std::fs::write(dir.join(format!("f{}.txt", i % 7)), format!("{word}\n")).unwrap();
        let hits: Vec<(bool, u64)> = std::thread::scope(|s| {
            let run = || {
                let out = search(&dir, &word, Some(&index), |_| {});
                (out.from_index, out.matches)
            };
            let handles: Vec<_> = (0..3).map(|_| s.spawn(run)).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(hits.iter().all(|&(_, n)| n == 1), "round {i}: (from_index, matches) {hits:?}");
    }
}

/// A large file is indexed in chunks that overlap: a short match across a chunk's edge is
/// found, and a large file whose trigrams are far apart is not read for a short match.
#[test]
fn large_files_answer_short_matches_by_chunk() {
    let filler = |n: usize| "abcdefgh ".repeat(n / 9);
    let edge = (64 << 10) - 5;
    let mut across = filler(edge);
    across.push_str("needleFar");
    across.push_str(&filler(3 << 20));
    let mut apart = String::from("need\n");
    apart.push_str(&filler(2 << 20));
    apart.push_str("eedl\nleF\nFar\n");
    apart.push_str(&filler(1 << 20));
    let dir = std::fs::canonicalize(tree(&[("across.txt", &across), ("apart.txt", &apart)])).unwrap();
    let index = ready(&dir);
    let out = same(&dir, &index, "needleFar", |_| {});
    assert_eq!((out.matched_files, out.files_read), (1, 1));
    let out = same(&dir, &index, "need.*Far", |c| {
        c.multiline(true);
    });
    assert_eq!(out.files_read, 2, "an unbounded match reads every file that holds its trigrams");
}

#[test]
fn a_folder_of_many_files_is_searched_from_the_index() {
    let names: Vec<String> = (0..FEW + 6).map(|i| format!("many/f{i}.txt")).collect();
    let files: Vec<(&str, &str)> =
        names.iter().map(|n| (n.as_str(), "plain\n")).chain([("many/hit.txt", "needle\n")]).collect();
    let dir = std::fs::canonicalize(tree(&files)).unwrap();
    let index = ready(&dir);
    let out = search(&dir.join("many"), "needle", Some(&index), |_| {});
    assert!(out.from_index && out.files_read == 1 && out.matches == 1, "{out:?}");
}

/// The watches of a folder moved within the workspace follow it: a file changed or added
/// in it afterwards is seen under its new path, and nothing under the old one.
#[test]
fn changes_inside_a_moved_folder_are_seen_under_its_new_path() {
    let dir = std::fs::canonicalize(tree(&[("a/b/f.txt", "old\n"), ("x.txt", "x\n")])).unwrap();
    let index = ready(&dir);
    std::fs::rename(dir.join("a"), dir.join("c")).unwrap();
    assert!(same(&dir, &index, "old", |_| {}).text.starts_with("c/b/f.txt:1:"));
    std::fs::write(dir.join("c/b/f.txt"), "changed\n").unwrap();
    std::fs::write(dir.join("c/b/g.txt"), "added\n").unwrap();
    std::fs::create_dir(dir.join("c/b/d")).unwrap();
    std::fs::write(dir.join("c/b/d/h.txt"), "deeper\n").unwrap();
    assert_eq!(same(&dir, &index, "old", |_| {}).matches, 0);
    assert!(same(&dir, &index, "changed", |_| {}).text.starts_with("c/b/f.txt:1:"));
    assert!(same(&dir, &index, "added", |_| {}).text.starts_with("c/b/g.txt:1:"));
    assert!(same(&dir, &index, "deeper", |_| {}).text.starts_with("c/b/d/h.txt:1:"));
}

/// `git init` in a workspace that was not a repository: ignore files above it stop
/// applying (git's rule), as they do for a walk.
#[test]
fn a_repository_made_in_the_workspace_changes_the_rules_as_for_a_walk() {
    let outer =
        std::fs::canonicalize(tree(&[(".gitignore", "*.log\n"), ("ws/a.log", "needle\n"), ("ws/b.txt", "needle\n")]))
            .unwrap();
    let dir = outer.join("ws");
    let index = ready(&dir);
    assert!(!same(&dir, &index, "needle", |_| {}).text.contains("a.log"));
    std::fs::create_dir(dir.join(".git")).unwrap();
    assert!(same(&dir, &index, "needle", |_| {}).text.contains("a.log"));
}
