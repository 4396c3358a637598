"""The exceptions anabranch raises: one base class, one subclass per C API status code."""


class Error(Exception):
    """Base class of every anabranch error."""


class UsageError(Error, ValueError):
    """Bad arguments or inconsistent calls (AB_ERR_USAGE)."""


class FormatError(Error):
    """A file's bytes are not what its format says (AB_ERR_FORMAT); the message names the
    file, the record and the byte offset."""


class IoError(Error, OSError):
    """The system refused a read, write, open or rename (AB_ERR_IO)."""


class MpiError(Error):
    """An MPI call failed, or another rank failed in a collective call (AB_ERR_MPI)."""


class MemoryError(Error, MemoryError):  # noqa: A001 - shadows the builtin inside this module only
    """Out of memory (AB_ERR_MEMORY)."""


class InternalError(Error):
    """Anything else (AB_ERR_INTERNAL)."""
