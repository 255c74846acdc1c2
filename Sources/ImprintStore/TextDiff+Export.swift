// `TextDiff` lives in the engine (its Codable encoder updates text fields with it); code that
// imports only ImprintStore keeps seeing it, as `replaceBody` returns its splices.
@_exported import struct ImprintCRDT.TextDiff
