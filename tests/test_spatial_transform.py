"""``traxla.scipy.spatial.transform`` (``Rotation``, ``Slerp``) against SciPy (values) and
JAX 0.10.2 (jaxprs, errors)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.spatial.transform as scipy_transform

import jax
import jax.scipy.spatial.transform as jax_transform

import traxla
import traxla.numpy as tnp
import traxla.scipy.spatial.transform as traxla_transform
from traxla.scipy.spatial.transform import Rotation, Slerp

# unnormalized quaternions (scalar last), one with a negative w (a w of 0 is a half turn,
# whose rotation vector's sign SciPy picks and JAX does not: see the canonical test)
QUATS = np.array([[0.1, 0.2, 0.3, 0.9], [-0.5, 0.2, 0.1, -0.3], [0., -0.6, 0.8, 0.05]],
                 np.float32)
VECTORS = np.array([[1., 0., 0.], [0.3, -2., 0.5], [0., 0., 1.]], np.float32)
EULER = np.array([[0.3, -0.2, 1.1], [2.5, 0.4, -1.0]], np.float32)
SCIPY_ROTATIONS = scipy_transform.Rotation.from_quat(QUATS.astype(np.float64))


def _close(got, want, atol=2e-5):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=atol)


def test_representations_match_scipy():
    @traxla.jit
    def representations(quats, vectors):
        r = Rotation.from_quat(quats)
        return (r.as_matrix(), r.as_rotvec(), r.as_rotvec(degrees=True), r.as_mrp(),
                r.magnitude(), r.inv().as_matrix(), r.apply(vectors),
                r.apply(vectors, inverse=True), r.as_quat(canonical=True),
                r.as_quat(scalar_first=True))
    got = representations(QUATS, VECTORS)
    s = SCIPY_ROTATIONS
    want = (s.as_matrix(), s.as_rotvec(), s.as_rotvec(degrees=True), s.as_mrp(),
            s.magnitude(), s.inv().as_matrix(), s.apply(VECTORS),
            s.apply(VECTORS, inverse=True), s.as_quat(canonical=True),
            s.as_quat(scalar_first=True))
    for g, w in zip(got, want):
        _close(g, w, atol=1e-4)


def test_canonical_quaternions_match_scipy():
    # w == 0: the sign is taken from the first nonzero of x, y, z
    quats = np.array([[0., -0.6, 0.8, 0.], [0., 0., -1., 0.], [-0.6, 0.8, 0., 0.]], np.float32)
    got = Rotation.from_quat(quats).as_quat(canonical=True)
    _close(got, scipy_transform.Rotation.from_quat(quats).as_quat(canonical=True))


@pytest.mark.parametrize("seq,degrees", [("zyx", False), ("XZX", True), ("xyx", False)])
def test_euler_round_trip_matches_scipy(seq, degrees):
    angles = np.rad2deg(EULER) if degrees else EULER
    quats = traxla.jit(lambda a: Rotation.from_euler(seq, a, degrees=degrees).quat)(angles)
    want = scipy_transform.Rotation.from_euler(seq, angles, degrees=degrees)
    _close(Rotation(quats).as_matrix(), want.as_matrix())
    got = traxla.jit(lambda q: Rotation(q).as_euler(seq, degrees=degrees))(quats)
    _close(got, want.as_euler(seq, degrees=degrees), atol=1e-3 if degrees else 2e-5)
    # one axis, one scalar angle: a single rotation
    single = Rotation.from_euler("z", 0.5)
    assert single.single
    _close(single.as_matrix(), scipy_transform.Rotation.from_euler("z", 0.5).as_matrix())


def test_constructors_match_scipy():
    matrices = SCIPY_ROTATIONS.as_matrix().astype(np.float32)
    rotvecs = SCIPY_ROTATIONS.as_rotvec().astype(np.float32)
    mrps = SCIPY_ROTATIONS.as_mrp().astype(np.float32)
    got = traxla.jit(lambda m, v, p: (Rotation.from_matrix(m).as_matrix(),
                                      Rotation.from_rotvec(v).as_matrix(),
                                      Rotation.from_rotvec(tnp.rad2deg(v), degrees=True).as_matrix(),
                                      Rotation.from_mrp(p).as_matrix()))(matrices, rotvecs, mrps)
    for g in got:
        _close(g, matrices, atol=1e-4)
    # a tiny rotation vector takes the Taylor branch
    tiny = Rotation.from_rotvec(np.array([1e-4, 0., 0.], np.float32))
    _close(tiny.as_rotvec(), [1e-4, 0., 0.], atol=1e-8)


def test_composition_indexing_and_sequences():
    r = Rotation.from_quat(QUATS)
    composed = r * r[::-1]
    want = SCIPY_ROTATIONS * SCIPY_ROTATIONS[::-1]
    _close(composed.as_matrix(), want.as_matrix())
    assert len(r) == 3 and r[1].single and len(r[1:]) == 2
    both = Rotation.concatenate([r[:1], r[1:]])
    _close(both.quat, r.quat, atol=0)
    assert Rotation.identity().quat.tolist() == [0., 0., 0., 1.]
    assert Rotation.identity(2).quat.shape == (2, 4)
    with pytest.raises(TypeError, match="Single rotation is not subscriptable."):
        r[0][0]
    with pytest.raises(TypeError, match="Single rotation has no len()."):
        len(r[0])


def test_mean_matches_scipy():
    weights = np.array([1., 2., 0.5], np.float32)
    got = traxla.jit(lambda q, w: Rotation.from_quat(q).mean(w).as_matrix())(QUATS, weights)
    _close(got, SCIPY_ROTATIONS.mean(weights).as_matrix(), atol=1e-4)
    _close(Rotation.from_quat(QUATS).mean().as_matrix(), SCIPY_ROTATIONS.mean().as_matrix(),
           atol=1e-4)
    with pytest.raises(ValueError, match="Expected `weights` to be 1 dimensional"):
        Rotation.from_quat(QUATS).mean(weights[None])
    with pytest.raises(ValueError, match="got 2 values and 3 rotations"):
        Rotation.from_quat(QUATS).mean(weights[:2])


def test_random_gives_unit_quaternions():
    key = traxla.random.key(0)
    many = Rotation.random(key, 5)
    assert many.quat.shape == (5, 4)
    _close(np.linalg.norm(np.asarray(many.quat), axis=-1), np.ones(5), atol=1e-6)
    assert Rotation.random(key).single
    np.testing.assert_array_equal(Rotation.random(key, 5).quat, many.quat)


def test_slerp_matches_scipy():
    times = np.array([0., 1., 3.], np.float32)
    query = np.array([0., 0.25, 1., 2.5, 3.], np.float32)
    slerp = traxla.jit(lambda q: Slerp.init(times, Rotation.from_quat(q)))(QUATS)
    got = traxla.jit(lambda s, t: s(t).as_matrix())(slerp, query)
    want = scipy_transform.Slerp(times, SCIPY_ROTATIONS)(query)
    _close(got, want.as_matrix(), atol=1e-4)
    one = slerp(np.float32(0.5))
    assert one.single
    _close(one.as_matrix(), scipy_transform.Slerp(times, SCIPY_ROTATIONS)(0.5).as_matrix(),
           atol=1e-4)


def test_vmap_over_rotations():
    matrices = traxla.vmap(lambda q: Rotation.from_quat(q).as_matrix())(QUATS)
    _close(matrices, SCIPY_ROTATIONS.as_matrix())
    applied = traxla.vmap(lambda q, v: Rotation.from_quat(q).apply(v))(QUATS, VECTORS)
    _close(applied, SCIPY_ROTATIONS.apply(VECTORS))


JAXPR_CASES = {
    "as_matrix": lambda m, q: m.Rotation.from_quat(q).as_matrix(),
    "compose_as_rotvec": lambda m, q: (m.Rotation.from_quat(q) * m.Rotation(q[::-1])).as_rotvec(),
    "from_euler": lambda m, q: m.Rotation.from_euler("XYZ", q[:, :3], degrees=True).quat,
    "from_matrix_mean": lambda m, q: m.Rotation.from_matrix(
        m.Rotation(q).as_matrix()).mean().quat,
    # (indexing with a weakly typed traced int, `angles[angle_first]`: made strong first, as JAX)
    "as_euler": lambda m, q: m.Rotation(q).as_euler("zyx"),
}


@pytest.mark.parametrize("case", list(JAXPR_CASES.values()), ids=list(JAXPR_CASES))
def test_jaxpr_matches_jax(case):
    assert (str(traxla.make_jaxpr(lambda q: case(traxla_transform, q))(QUATS))
            == str(jax.make_jaxpr(lambda q: case(jax_transform, q))(QUATS)))


def test_errors_as_jax():
    with pytest.raises(ValueError, match="non-empty string of upto 3 characters"):
        Rotation.from_euler("xyzx", np.zeros(4, np.float32))
    with pytest.raises(ValueError, match=r"Expected axes from `seq` to be from"):
        Rotation.from_euler("xY", np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="Expected consecutive axes to be different"):
        Rotation.from_euler("xxy", np.zeros(3, np.float32))
    r = Rotation.from_quat(QUATS)
    with pytest.raises(ValueError, match="Expected 3 axes, got xy."):
        r.as_euler("xy")
    with pytest.raises(TypeError, match="`rotations` must be a `Rotation` instance."):
        Slerp.init([0., 1.], QUATS[:2])
    with pytest.raises(ValueError, match="at least 2 rotations"):
        Slerp.init([0.], r[:1])
    with pytest.raises(ValueError, match="got 3 rotations and 2 timestamps"):
        Slerp.init([0., 1.], r)
    with pytest.raises(ValueError, match="`times` must be at most 1-dimensional."):
        Slerp.init([0., 1., 2.], r)(np.zeros((2, 2), np.float32))
