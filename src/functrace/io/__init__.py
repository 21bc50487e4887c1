"""Checkpoints: ``save(path, tree)``, ``load(path, like=None)`` and rotating
``save_checkpoint(directory, step, tree, keep=N)`` / ``latest_checkpoint(directory)``.

Format (version 2). A checkpoint is a NumPy ``.npz`` file (an uncompressed zip):
one member ``leaf_<i>.npy`` per leaf, in ``tree_flatten`` order, and a member
``__meta__.npy`` holding UTF-8 JSON::

    {"format": "functrace-checkpoint", "version": 2,
     "paths": ["['a']", ...],            # keystr of each leaf path
     "kinds": ["array", "float", ...],   # what each leaf was (see below)
     "structure": [...] | null,          # the tree's nodes in preorder, or null
     "why": "..."}                       # why the structure is null, if it is

Leaf kinds: ``array`` (an ``ndarray``, any dtype NumPy stores without pickle:
bool, integers, floats, complex, datetime64, timedelta64, bytes/str and
structured dtypes; 0-d and size-0 included), ``generic`` (a NumPy scalar),
``int``/``float``/``complex``/``bool`` (Python scalars), ``str``/``bytes``
(stored as UTF-8/raw ``uint8`` arrays). Other array-likes are stored with
``numpy.asarray`` and come back as arrays.

Structure nodes: ``none``, ``leaf``, ``tuple``/``list`` (with ``n`` children),
``dict`` (its keys in flatten order and their insertion ``order``), ``odict``,
``ddict`` (``defaultdict``), ``namedtuple`` and ``custom`` (a registered pytree
class or ``nn.Module``, named by module and qualified name, with its aux data).
Dict keys and aux data may be None, bools, ints, floats, strings, bytes,
tuples, lists, dicts of those, NumPy dtypes and scalars, classes of ``builtins``
and ``numpy``, and functions and classes of ``functrace`` (such as
``nn.relu``). A tree with anything else (a user-defined activation function,
say) is saved with ``structure: null`` and loads only with ``like=``.

Loading never unpickles and never imports a module named in a file: node
classes are looked up in the modules already imported (``functrace``'s own are
imported on demand). So a checkpoint of a user's namedtuple or registered class
loads without ``like`` in any process that has imported the class.

Writes are atomic: the file is written to ``.tmp-ft-<pid>-*.npz`` next to the
target, flushed, and renamed over it, so a crash (even ``kill -9``) never leaves
a half-written checkpoint; temp files of dead processes are deleted by the next
save in that directory and never read by :func:`load` or
:func:`latest_checkpoint`.

Every malformed file (truncated, not a zip, a plain ``.npy``, a foreign
``.npz``, an unknown version, hand-edited metadata, absurd shapes, deep
nesting, compressed or oversized members, bad CRCs) raises
:class:`CheckpointError`, a ``ValueError`` naming the file and the problem,
before any allocation larger than the file itself.

The modules: ``_files`` (writing and reading the files, checkpoint rotation) and
``_tree`` (the tree's structure and leaves inside a file).
"""

from __future__ import annotations

from functrace.io._files import FORMAT as FORMAT
from functrace.io._files import VERSION as VERSION
from functrace.io._files import (
    checkpoint_path,
    describe,
    latest_checkpoint,
    load,
    save,
    save_checkpoint,
)
from functrace.io._tree import CheckpointError

__all__ = [
    "CheckpointError",
    "checkpoint_path",
    "describe",
    "latest_checkpoint",
    "load",
    "save",
    "save_checkpoint",
]
