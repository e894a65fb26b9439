use std::fmt;
use std::path::{Path, PathBuf};

/// An error from fsgate-core: a stable [`ErrorKind`] plus a message for people.
///
/// The kind is what programs match on; the message is never parsed.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    path: Option<PathBuf>,
}

/// The kinds of failure the core reports. Each maps to one stable code at the binding layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The path does not exist.
    NotFound,
    /// The path names a directory where a file was expected.
    IsDirectory,
    /// The path is a device, FIFO, socket or other non-regular file.
    BlockedDevice,
    /// The real path lies outside every allowed root.
    OutsideRoots,
    /// The path is malformed (NUL byte, empty).
    InvalidPath,
    /// The file is larger than the caller allowed.
    TooLarge,
    /// An image could not be decoded or re-encoded.
    Image,
    /// The caller cancelled the operation.
    Cancelled,
    /// The operating system refused access.
    PermissionDenied,
    /// The file changed since the version the caller expected.
    Stale,
    /// A file is already there and the caller expected none.
    Exists,
    /// The file's bytes are not text that could be written back unchanged.
    Encoding,
    /// A regular expression did not compile.
    InvalidPattern,
    /// A glob did not compile.
    InvalidGlob,
    /// An option the caller gave is not valid (an unknown file type).
    InvalidInput,
    /// A PDF that is damaged, not a PDF, or built to exhaust a reader.
    Pdf,
    /// A Jupyter notebook that is not valid JSON or not shaped like a notebook.
    Notebook,
    /// Work took longer than its time limit.
    Timeout,
    /// The file system is full (or the user's quota is spent): nothing was written.
    NoSpace,
    /// Any other I/O failure.
    Io,
}

impl Error {
    /// Creates an error of `kind` with a lowercase message without trailing period.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into(), path: None }
    }

    /// Wraps an I/O error, classifying the common kinds.
    pub fn io(err: std::io::Error) -> Error {
        let kind = match err.kind() {
            std::io::ErrorKind::NotFound => ErrorKind::NotFound,
            std::io::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
            _ if err.raw_os_error() == Some(ENOTDIR) => ErrorKind::NotFound,
            _ if err.raw_os_error() == Some(ELOOP) => ErrorKind::InvalidPath,
            _ if err.raw_os_error() == Some(ENAMETOOLONG) => ErrorKind::InvalidPath,
            _ if err.raw_os_error().is_some_and(|code| NO_SPACE.contains(&code)) => ErrorKind::NoSpace,
            _ if err.raw_os_error() == Some(EROFS) => ErrorKind::PermissionDenied,
            _ => ErrorKind::Io,
        };
        let message = match err.raw_os_error() {
            Some(ELOOP) => "has a symlink loop or too many symlinks".to_string(),
            Some(ENAMETOOLONG) => "has a name longer than the file system allows".to_string(),
            _ => err.to_string(),
        };
        Error::new(kind, message)
    }

    /// Adds the path this error is about.
    pub fn with_path(mut self, path: &Path) -> Error {
        self.path = Some(path.to_path_buf());
        self
    }

    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The path this error is about, if known.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The message without the path.
    pub fn message(&self) -> &str {
        &self.message
    }
}

#[cfg(unix)]
const ENOTDIR: i32 = libc::ENOTDIR;
#[cfg(not(unix))]
const ENOTDIR: i32 = 267; // ERROR_DIRECTORY
#[cfg(unix)]
const ENAMETOOLONG: i32 = libc::ENAMETOOLONG;
#[cfg(not(unix))]
const ENAMETOOLONG: i32 = 206; // ERROR_FILENAME_EXCED_RANGE
#[cfg(unix)]
const NO_SPACE: [i32; 2] = [libc::ENOSPC, libc::EDQUOT];
#[cfg(not(unix))]
const NO_SPACE: [i32; 2] = [112, 39]; // ERROR_DISK_FULL, ERROR_HANDLE_DISK_FULL
#[cfg(unix)]
const EROFS: i32 = libc::EROFS;
#[cfg(not(unix))]
const EROFS: i32 = 19; // ERROR_WRITE_PROTECT
#[cfg(unix)]
const ELOOP: i32 = libc::ELOOP;
#[cfg(not(unix))]
const ELOOP: i32 = 1921; // ERROR_CANT_RESOLVE_FILENAME

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{}: {}", p.display(), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Error {
        Error::io(err)
    }
}

/// The result type of fsgate-core.
pub type Result<T> = std::result::Result<T, Error>;
