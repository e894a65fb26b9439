use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::cancel::Cancel;
use crate::dir::Dir;
use crate::error::Result;
use crate::live::{plan::Query, Found, LiveIndex, Want};
use crate::walk::{self, WalkConfig};
use crate::Roots;

/// The order of [`glob_files`]'s results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GlobOrder {
    /// By path, component by component (the order of `rg --files --sort path`).
    #[default]
    Path,
    /// Most recently modified first, then by path.
    Newest,
}

/// Options of [`glob_files`].
#[derive(Clone, Debug)]
pub struct GlobConfig {
    walk: WalkConfig,
    order: GlobOrder,
    limit: usize,
    offset: usize,
    live: Option<Arc<LiveIndex>>,
}

impl Default for GlobConfig {
    fn default() -> GlobConfig {
        GlobConfig { walk: WalkConfig::default(), order: GlobOrder::Path, limit: 1000, offset: 0, live: None }
    }
}

impl GlobConfig {
    /// The walk: ignore rules and hidden files. Its globs are replaced by the pattern
    /// given to [`glob_files`].
    pub fn walk(&mut self) -> &mut WalkConfig {
        &mut self.walk
    }

    /// The order of the results. By default, this is [`GlobOrder::Path`].
    pub fn order(&mut self, order: GlobOrder) -> &mut Self {
        self.order = order;
        self
    }

    /// The most paths returned; the rest are counted. By default, this is 1000.
    pub fn limit(&mut self, limit: usize) -> &mut Self {
        self.limit = limit;
        self
    }

    /// The live index of the workspace: when it can answer, its snapshot is listed
    /// instead of the tree (the results are the same). By default, there is none.
    pub fn live(&mut self, index: Option<Arc<LiveIndex>>) -> &mut Self {
        self.live = index;
        self
    }

    /// Paths skipped before the first returned, in the order of the results. By
    /// default, this is 0.
    pub fn offset(&mut self, offset: usize) -> &mut Self {
        self.offset = offset;
        self
    }
}

/// The files [`glob_files`] found.
#[derive(Debug)]
pub struct GlobOutcome {
    /// The paths, in order, at most the limit: relative to the display root when
    /// inside it, else absolute.
    pub paths: Vec<String>,
    /// Every file that matched.
    pub total: usize,
    /// Folders that could not be read, as messages.
    pub errors: Vec<String>,
    /// Whether the live index's snapshot was listed (else the tree was walked).
    pub from_index: bool,
}

/// Lists the files under `base` whose path relative to `base` matches `pattern`
/// (ripgrep's `--glob` rules: `*.rs` at any depth, `src/**/*.rs` from `base`; braces
/// and classes), honouring ignore files and skipping hidden files as configured.
///
/// `base` must be a folder inside the roots. Paths are shown relative to
/// `display_root` (the workspace).
pub fn glob_files(
    roots: &Roots,
    base: &Path,
    display_root: &Path,
    pattern: &str,
    config: &GlobConfig,
    cancel: &Cancel,
) -> Result<GlobOutcome> {
    let dir = walk::search_folder(roots, base)?;
    let mut walk_config = config.walk.clone();
    walk_config.globs(&[pattern]);
    let filter = walk::Filter::new(&walk_config)?;
    let selection = config.live.as_ref().and_then(|live| {
        live.select(
            &dir,
            &Want { walk: &walk_config, filter: &filter, query: Query::All, longest: None, multiline: false },
        )
    });
    if let Some(selection) = selection {
        return Ok(from_snapshot(selection.files, config, &walk::real_or_self(display_root)));
    }
    let (files, mut errors, mut moved) = walk::list(&dir, &walk_config, cancel)?;
    let listed = files.len();
    let display_root = walk::real_or_self(display_root);
    // Every name shown is looked at again (see `look_again`). Newest first needs every
    // file's time, so every file is looked at; by path, only as many as the page needs
    // (a look costs about as much as the listing), so that under a folder swapped while
    // the walk read it the total may count names that are never shown.
    let (paths, total) = match config.order {
        GlobOrder::Newest => {
            let mut found: Vec<(Vec<u8>, &Path, i128)> = look_again(&files, |p| p, true)
                .into_iter()
                .map(|(i, mtime)| (walk::sort_key(&files[i]), files[i].as_path(), mtime))
                .collect();
            found.par_sort_unstable_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
            moved.add(listed - found.len());
            let paths = found
                .iter()
                .skip(config.offset)
                .take(config.limit)
                .map(|(_, p, _)| walk::shown(&display_root, p))
                .collect();
            (paths, found.len())
        }
        GlobOrder::Path => {
            let mut files: Vec<(Vec<u8>, PathBuf)> = files.into_par_iter().map(|p| (walk::sort_key(&p), p)).collect();
            files.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
            // The paths before the offset are looked at too, so that pages line up.
            let need = config.offset.saturating_add(config.limit);
            let (mut kept_paths, mut gone, mut looked) = (Vec::new(), 0, 0);
            while kept_paths.len() < need && looked < files.len() {
                let end = files.len().min(looked + (need - kept_paths.len()).max(256));
                let chunk = &files[looked..end];
                let kept = look_again(chunk, |(_, p)| p, false);
                gone += chunk.len() - kept.len();
                let room = need - kept_paths.len();
                kept_paths.extend(kept.iter().take(room).map(|&(i, _)| &chunk[i].1));
                looked = end;
            }
            let paths = kept_paths.iter().skip(config.offset).map(|p| walk::shown(&display_root, p)).collect();
            moved.add(gone);
            (paths, listed - gone)
        }
    };
    errors.extend(moved.note());
    Ok(GlobOutcome { paths, total, errors, from_index: false })
}

/// The page of a listing of the live index's snapshot (fresh as of the call; in path
/// order, with each file's modification time): the files of the page are looked at
/// again as a walk's are, and one that is gone since is left out.
fn from_snapshot(mut files: Vec<Found>, config: &GlobConfig, display_root: &Path) -> GlobOutcome {
    if config.order == GlobOrder::Newest {
        // Path order is kept among files of the same time (the sort is stable).
        files.sort_by_key(|f| std::cmp::Reverse(f.mtime_ns));
    }
    let need = config.offset.saturating_add(config.limit).min(files.len());
    let kept = look_again(&files[..need], |f| &f.path, false);
    let gone = need - kept.len();
    let paths = kept.iter().skip(config.offset).map(|&(i, _)| walk::shown(display_root, &files[i].path)).collect();
    let mut moved = walk::Moved::default();
    moved.add(gone);
    GlobOutcome { paths, total: files.len() - gone, errors: moved.note().into_iter().collect(), from_index: true }
}

/// Files listed, looked at again by name inside their folder, opened without following a
/// link (one `openat2` a folder, one `fstatat` a file): a name listed from a folder that
/// was swapped for a link while the walk read it is not there now, inside, and is left out
/// (the caller counts it, never shows it). The same look gives the modification time
/// (`newest`), of the file itself. Returns the index in `items` and the time (0 unless
/// `newest`) of each file kept, in the order given.
fn look_again<T: Sync>(items: &[T], path: impl Fn(&T) -> &Path + Sync, newest: bool) -> Vec<(usize, i128)> {
    // A walk yields a folder's files one after another: runs of one folder, each looked at
    // through one open of it.
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match runs.last_mut() {
            Some(run) if path(&items[run.start]).parent() == path(item).parent() => run.end = i + 1,
            _ => runs.push(i..i + 1),
        }
    }
    let kept: Vec<Vec<(usize, i128)>> = runs
        .into_par_iter()
        .map(|run| {
            let Some(dir) = path(&items[run.start]).parent().and_then(|folder| Dir::open_to_look(folder).ok()) else {
                return Vec::new();
            };
            run.filter_map(|i| {
                let stat = dir.stat(path(&items[i]).file_name()?).ok().filter(|s| s.is_file)?;
                Some((i, if newest { i128::from(stat.mtime.0) * 1_000_000_000 + i128::from(stat.mtime.1) } else { 0 }))
            })
            .collect()
        })
        .collect();
    kept.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tree;

    fn glob(dir: &Path, pattern: &str, setup: impl FnOnce(&mut GlobConfig)) -> Result<GlobOutcome> {
        let roots = Roots::new(&[dir]).unwrap();
        let mut config = GlobConfig::default();
        setup(&mut config);
        glob_files(&roots, dir, dir, pattern, &config, &Cancel::new())
    }

    /// The names a walk read through a folder swapped for a link (another place's names)
    /// are not shown: while the link is there none is, and once the folder is back only
    /// the names that are in it.
    #[cfg(unix)]
    #[test]
    fn names_listed_through_a_folder_swapped_for_a_link_are_left_out() {
        let dir = std::fs::canonicalize(tree(&[("sub/in.txt", "x"), ("sub/both.txt", "x")])).unwrap();
        let outside = std::fs::canonicalize(tree(&[("secret.txt", "x"), ("both.txt", "x")])).unwrap();
        let listed = ["in.txt", "secret.txt", "both.txt"].map(|n| dir.join("sub").join(n)).to_vec();
        std::fs::rename(dir.join("sub"), dir.join("sub.real")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("sub")).unwrap();
        assert!(look_again(&listed, |p| p, true).is_empty());
        std::fs::remove_file(dir.join("sub")).unwrap();
        std::fs::rename(dir.join("sub.real"), dir.join("sub")).unwrap();
        let kept: Vec<&PathBuf> = look_again(&listed, |p| p, true).into_iter().map(|(i, _)| &listed[i]).collect();
        assert_eq!(kept, [&dir.join("sub/in.txt"), &dir.join("sub/both.txt")]);
    }

    #[test]
    fn name_patterns_match_at_any_depth_and_slashed_ones_from_the_base() {
        let dir = tree(&[("a.rs", ""), ("src/b.rs", ""), ("src/deep/c.rs", ""), ("src/d.ts", ""), ("docs/e.md", "")]);
        assert_eq!(glob(&dir, "*.rs", |_| {}).unwrap().paths, ["a.rs", "src/b.rs", "src/deep/c.rs"]);
        assert_eq!(glob(&dir, "src/*.rs", |_| {}).unwrap().paths, ["src/b.rs"]);
        assert_eq!(glob(&dir, "src/**/*.{rs,ts}", |_| {}).unwrap().paths, ["src/b.rs", "src/d.ts", "src/deep/c.rs"]);
        assert_eq!(glob(&dir, "**/[cd].*", |_| {}).unwrap().paths, ["src/d.ts", "src/deep/c.rs"]);
    }

    #[test]
    fn gitignore_and_hidden_rules_apply_outside_git_repositories() {
        let dir = tree(&[
            (".gitignore", "target/\n*.log\n"),
            ("a.txt", ""),
            ("b.log", ""),
            ("target/x.txt", ""),
            (".env", ""),
        ]);
        assert_eq!(glob(&dir, "**/*", |_| {}).unwrap().paths, ["a.txt"]);
        let all = glob(&dir, "**/*", |c| {
            c.walk().include_hidden(true).include_ignored(true);
        })
        .unwrap();
        assert_eq!(all.paths, [".env", ".gitignore", "a.txt", "b.log", "target/x.txt"]);
    }

    #[test]
    fn vcs_folders_stay_out_even_with_hidden_files() {
        let dir = tree(&[(".git/config", ""), (".hg/x", ""), (".github/ci.yml", "")]);
        let out = glob(&dir, "**/*", |c| {
            c.walk().include_hidden(true);
        })
        .unwrap();
        assert_eq!(out.paths, [".github/ci.yml"]);
    }

    #[test]
    fn without_ignore_files_hidden_and_vcs_rules_and_negated_globs_still_apply() {
        let dir = tree(&[
            (".gitignore", "*.log\n"),
            ("a.log", ""),
            (".env", ""),
            (".git/HEAD", ""),
            ("dist/x.js", ""),
            ("s/b.js", ""),
        ]);
        let out = glob(&dir, "**/*", |c| {
            c.walk().include_ignored(true);
        })
        .unwrap();
        assert_eq!(out.paths, ["a.log", "dist/x.js", "s/b.js"]);
        let out = glob(&dir, "**/*", |c| {
            c.walk().include_ignored(true).include_hidden(true).globs(&["!dist"]);
        })
        .unwrap();
        // The walk's own glob list is replaced by the pattern; the negation is tested in grep.
        assert_eq!(out.paths, [".env", ".gitignore", "a.log", "dist/x.js", "s/b.js"]);
    }

    #[test]
    fn the_limit_keeps_the_first_paths_and_counts_the_rest() {
        let dir = tree(&[("c", ""), ("a", ""), ("b", "")]);
        let out = glob(&dir, "*", |c| {
            c.limit(2);
        })
        .unwrap();
        assert_eq!((out.paths, out.total), (vec!["a".to_string(), "b".to_string()], 3));
    }

    #[test]
    fn pages_by_offset_together_are_the_whole_list() {
        let names: Vec<String> = (0..23).map(|i| format!("f{i:02}")).collect();
        let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
        let dir = tree(&files);
        for size in [1, 4, 10] {
            let mut all = Vec::new();
            for offset in (0..30).step_by(size) {
                let out = glob(&dir, "*", |c| {
                    c.limit(size).offset(offset);
                })
                .unwrap();
                assert_eq!(out.total, 23);
                all.extend(out.paths);
            }
            assert_eq!(all, names, "pages of {size}");
        }
    }

    #[test]
    fn newest_first_orders_by_modification_time() {
        let dir = tree(&[("old", ""), ("new", "")]);
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options().write(true).open(dir.join("old")).unwrap().set_modified(past).unwrap();
        let out = glob(&dir, "*", |c| {
            c.order(GlobOrder::Newest);
        })
        .unwrap();
        assert_eq!(out.paths, ["new", "old"]);
    }

    #[test]
    fn ignore_files_above_a_repository_root_do_not_apply_inside_it() {
        // A dotfiles repository in a home folder whose .gitignore is `*` must not hide a
        // project that is a repository of its own.
        let home = tree(&[(".gitignore", "*\n"), ("project/.git/HEAD", ""), ("project/.gitignore", "*.log\n")]);
        std::fs::write(home.join("project/main.rs"), "").unwrap();
        std::fs::write(home.join("project/debug.log"), "").unwrap();
        let project = home.join("project");
        assert_eq!(glob(&project, "*", |_| {}).unwrap().paths, ["main.rs"]);
        // Outside a repository, ignore files above the folder searched do apply (as
        // ripgrep's --no-require-git).
        let plain = tree(&[(".gitignore", "*.log\n"), ("sub/a.rs", ""), ("sub/b.log", "")]);
        let roots = Roots::new(&[&plain]).unwrap();
        let out = glob_files(&roots, &plain.join("sub"), &plain, "*", &GlobConfig::default(), &Cancel::new()).unwrap();
        assert_eq!(out.paths, ["sub/a.rs"]);
    }

    #[test]
    fn a_bad_glob_is_an_invalid_pattern() {
        let dir = tree(&[("a", "")]);
        let err = glob(&dir, "src/[a-", |_| {}).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidGlob);
    }

    #[test]
    fn symlinks_are_not_followed_out_of_the_base() {
        let dir = tree(&[("in.txt", "")]);
        let outside = tree(&[("secret.txt", "")]);
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside, dir.join("link")).unwrap();
        assert_eq!(glob(&dir, "**/*", |_| {}).unwrap().paths, ["in.txt"]);
    }

    #[test]
    fn a_base_outside_the_roots_is_refused() {
        let dir = tree(&[("a", "")]);
        let other = tree(&[("b", "")]);
        let roots = Roots::new(&[&dir]).unwrap();
        let err = glob_files(&roots, &other, &dir, "*", &GlobConfig::default(), &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::OutsideRoots);
    }
}
