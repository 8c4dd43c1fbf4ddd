"""Lesson 6: a student's own Function, checked, judged and run without the server ever calling it.

* ``challenges``: what a student may be asked to write, each with its reference and a solution;
* ``validator`` (the first wall: an allow-list over the code's syntax) and ``guard`` (the second: the
  validated tree compiled under run-time guards);
* ``judge``: gradcheck, both Jacobians, the forward against the built-in, and the verdict in words;
* ``sandbox`` and ``channel`` (the third wall: a forked worker with limits, and what crosses to it), started
  as ``zygote``;
* ``remote`` and ``remote_runs``: a student's Function as an activation, and lesson 5's training, computed
  in a sandboxed worker.

Importing the package imports none of these: each is imported by name.
"""
