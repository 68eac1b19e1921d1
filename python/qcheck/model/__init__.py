"""The case model and its C API binding: libqcheck through ctypes (_capi),
a case (case), its semantic bins (bins), its tensors (tensors), a kernel's
domain (domain), known bugs (known), a plugin kernel (plugin), and one
case's runs and verdict (verdict, with the poisoned allocator and the
out-of-memory facts a run records). The lowest layer: it imports no other
part of qcheck."""
