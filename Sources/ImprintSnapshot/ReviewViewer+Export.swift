// The envelope and the viewer page live in the engine-free leaf `ImprintReviewViewer` (so
// `imprint-server` can serve the page) and appear in this module's public API.
@_exported import struct ImprintReviewViewer.ReviewEnvelope
@_exported import enum ImprintReviewViewer.ViewerPage
