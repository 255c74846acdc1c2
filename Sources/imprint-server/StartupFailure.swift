import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Startup failures as one `error:` line that says what to do, instead of the raw text of
/// the system call or Foundation error underneath.
enum StartupFailure {
    /// The data directory cannot be created or written: says why, from the path itself.
    static func dataDirectory(_ path: String, _ error: any Error) -> String {
        var ancestor = (path as NSString).deletingLastPathComponent
        while !ancestor.isEmpty, ancestor != "/", !FileManager.default.fileExists(atPath: ancestor) {
            ancestor = (ancestor as NSString).deletingLastPathComponent
        }
        if ancestor.isEmpty { ancestor = "." }
        var isDirectory: ObjCBool = false
        let why: String
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            why = "it is a file, not a directory"
        } else if FileManager.default.fileExists(atPath: ancestor, isDirectory: &isDirectory), !isDirectory.boolValue {
            why = "\(ancestor) is a file, not a directory"
        } else if access(ancestor, W_OK) != 0 {
            why = "\(ancestor) is not writable (\(String(cString: strerror(errno))))"
        } else {
            why = (error as NSError).localizedDescription
        }
        return "cannot use data directory \(path): \(why); choose a writable directory with --data (or --db)"
    }

    /// A message for an error that ends the server, or nil to keep the parser's.
    static func message(for error: any Error, host: String, port: Int, data: String) -> String? {
        if let io = error as? IOError {
            switch io.errnoCode {
            case EADDRINUSE:
                return "\(host):\(port) is already in use by another program; stop it or choose another --port (0 picks a free one)"
            case EADDRNOTAVAIL:
                return "cannot listen on \(host): no such address on this machine; use --host 127.0.0.1 or an address this machine has"
            case EACCES:
                return "not allowed to listen on port \(port); ports below 1024 need privileges: choose another --port"
            default:
                return "cannot listen on \(host):\(port): \(io.description)"
            }
        }
        let text = "\(error)"
        if text.contains("SQLite error 14") || text.contains("unable to open database") {
            return "cannot open the database under \(data): not writable or not a database; choose a writable --data or another --db"
        }
        return nil
    }
}
