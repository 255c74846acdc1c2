// The file primitives that appear in ImprintBundle's public API (`BundleLayout.bundleLock`,
// `ChangeLogWriter(lock:)`, watching a bundle) live in the ImprintFiles leaf; they are
// re-exported so `import ImprintBundle` is enough to use a bundle.
@_exported import struct ImprintFiles.FileLock
@_exported import struct ImprintFiles.FileError
@_exported import class ImprintFiles.DirectoryWatcher
@_exported import enum ImprintFiles.DirectoryWatchMechanism
@_exported import struct ImprintFiles.FileStamp
@_exported import struct ImprintFiles.TreeStamp
