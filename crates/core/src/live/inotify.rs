//! The watcher on Linux: inotify, asked only for changes. (The `notify` crate also asks
//! for every open of a file, so that a program reading the tree — ripgrep, a build, the
//! searches themselves — floods the kernel's queue of 16,384 events, which overflows and
//! forces a rescan of the whole workspace.)

use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use super::watch::Report;

const MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MODIFY
    | libc::IN_CLOSE_WRITE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_ATTRIB
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR
    | libc::IN_DONT_FOLLOW
    | libc::IN_EXCL_UNLINK;

/// An inotify instance watching every folder of a tree, read on a thread of its own that
/// sleeps in `poll` until the kernel has events (no work while nothing changes).
pub(crate) struct Inotify {
    stop: OwnedFd,
    thread: Option<JoinHandle<()>>,
}

impl Inotify {
    /// Watches every folder under `root` (links are not followed), then hands each change
    /// to `deliver` on the reading thread.
    pub(crate) fn start(root: &Path, deliver: impl Fn(Report) + Send + 'static) -> Result<Inotify, String> {
        // SAFETY: plain system calls; each returned descriptor is owned at once.
        let (fd, stop) = unsafe {
            let fd = libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK);
            if fd < 0 {
                return Err(std::io::Error::last_os_error().to_string());
            }
            let fd = OwnedFd::from_raw_fd(fd);
            let stop = libc::eventfd(0, libc::EFD_CLOEXEC);
            if stop < 0 {
                return Err(std::io::Error::last_os_error().to_string());
            }
            (fd, OwnedFd::from_raw_fd(stop))
        };
        let mut folders = HashMap::new();
        add_tree(&fd, root, &mut folders).map_err(|e| e.to_string())?;
        let stop_read = stop.try_clone().map_err(|e| e.to_string())?;
        let thread = std::thread::Builder::new()
            .name("fsgate-watch".into())
            .spawn(move || read_events(fd, stop_read, folders, deliver))
            .map_err(|e| e.to_string())?;
        Ok(Inotify { stop, thread: Some(thread) })
    }
}

impl Drop for Inotify {
    fn drop(&mut self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own eventfd.
        unsafe { libc::write(self.stop.as_raw_fd(), (&one as *const u64).cast(), 8) };
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Adds a watch on `dir` and every folder under it; the system's watch limit is an error.
fn add_tree(fd: &OwnedFd, dir: &Path, folders: &mut HashMap<i32, PathBuf>) -> std::io::Result<()> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(name) = CString::new(dir.as_os_str().as_bytes()) else { continue };
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), name.as_ptr(), MASK) };
        if wd < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::ENOSPC) {
                return Err(err);
            }
            continue; // gone, or not a folder any more: its parent's event tells
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
        folders.insert(wd, dir);
    }
    Ok(())
}

fn read_events(fd: OwnedFd, stop: OwnedFd, mut folders: HashMap<i32, PathBuf>, deliver: impl Fn(Report)) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let mut polls = [
            libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: stop.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: two valid pollfd structs.
        let n = unsafe { libc::poll(polls.as_mut_ptr(), 2, -1) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return deliver(Report::Broken("the watcher failed".into()));
        }
        if polls[1].revents != 0 {
            return;
        }
        // SAFETY: reads into our own buffer of its length.
        let len = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if len <= 0 {
            continue;
        }
        let mut at = 0;
        const HEAD: usize = std::mem::size_of::<libc::inotify_event>();
        while at + HEAD <= len as usize {
            // SAFETY: the kernel wrote whole events; the head is read unaligned.
            let event: libc::inotify_event = unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
            let name = &buf[at + HEAD..at + HEAD + event.len as usize];
            at += HEAD + event.len as usize;
            if event.mask & libc::IN_Q_OVERFLOW != 0 {
                deliver(Report::Rescan);
                continue;
            }
            if event.mask & libc::IN_IGNORED != 0 {
                folders.remove(&event.wd);
                continue;
            }
            let Some(dir) = folders.get(&event.wd) else { continue };
            let name = &name[..name.iter().position(|b| *b == 0).unwrap_or(name.len())];
            let path = if name.is_empty() { dir.clone() } else { dir.join(std::ffi::OsStr::from_bytes(name)) };
            let is_dir = event.mask & libc::IN_ISDIR != 0;
            if is_dir && event.mask & libc::IN_MOVED_FROM != 0 {
                // Its watches would go on naming it by its old path: they are dropped, and
                // taken again under the new one if it moved within the tree.
                let moved: Vec<i32> = folders.iter().filter(|(_, p)| p.starts_with(&path)).map(|(wd, _)| *wd).collect();
                for wd in moved {
                    // SAFETY: removes one of our own watches.
                    unsafe { libc::inotify_rm_watch(fd.as_raw_fd(), wd) };
                    folders.remove(&wd);
                }
            }
            let entered = is_dir && event.mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0;
            if entered && add_tree(&fd, &path, &mut folders).is_err() {
                deliver(Report::Broken("the system's limit of watched folders was reached".into()));
            }
            deliver(Report::Path { path, created: event.mask & libc::IN_CREATE != 0 });
        }
    }
}
