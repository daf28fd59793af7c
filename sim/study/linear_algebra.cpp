#include "sim/study/linear_algebra.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace sim::study {

namespace {

double determinant(const Matrix& m) {
  if (m.size() == 1) return m[0][0];
  if (m.size() == 2) return m[0][0] * m[1][1] - m[0][1] * m[1][0];
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
         m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

}  // namespace

Vector unit_vector(Vector v) {
  double norm = 0;
  for (double x : v) norm += x * x;
  norm = std::sqrt(norm);
  for (double& x : v) x = norm > 0 ? x / norm : 0;
  return v;
}

double model_value(const Vector& r, const Matrix& jac, const Vector& s) {
  double f = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    double v = r[i];
    for (size_t j = 0; j < s.size(); ++j) v += jac[i][j] * s[j];
    f += v * v;
  }
  return f;
}

std::optional<Matrix> solve(Matrix a, Matrix b) {
  const size_t k = a.size();
  double scale = 0;
  for (const auto& row : a)
    for (double v : row) scale = std::max(scale, std::fabs(v));
  if (scale == 0) return std::nullopt;
  for (size_t c = 0; c < k; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < k; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    if (std::fabs(a[p][c]) <= 1e-13 * scale) return std::nullopt;
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (size_t r = c + 1; r < k; ++r) {
      const double f = a[r][c] / a[c][c];
      for (size_t j = c; j < k; ++j) a[r][j] -= f * a[c][j];
      for (size_t j = 0; j < b[r].size(); ++j) b[r][j] -= f * b[c][j];
    }
  }
  for (size_t c = k; c-- > 0;) {
    for (size_t j = 0; j < b[c].size(); ++j) {
      double v = b[c][j];
      for (size_t r = c + 1; r < k; ++r) v -= a[c][r] * b[r][j];
      b[c][j] = v / a[c][c];
    }
  }
  return b;
}

double poise(const Matrix& directions) {
  Matrix u;
  for (const auto& d : directions) u.push_back(unit_vector(d));
  return std::fabs(determinant(u));
}

Vector box_least_squares(const Vector& r, const Matrix& jacobian, const Vector& lo, const Vector& hi) {
  const size_t n = lo.size(), m = r.size();
  double diag = 0;
  for (size_t j = 0; j < n; ++j) {
    double c = 0;
    for (size_t i = 0; i < m; ++i) c += jacobian[i][j] * jacobian[i][j];
    diag = std::max(diag, c);
  }
  const double ridge = 1e-12 * std::max(diag, 1e-300);
  Vector best(n, 0.0);
  double best_value = model_value(r, jacobian, best);
  int faces = 1;
  for (size_t j = 0; j < n; ++j) faces *= 3;
  // Each face: every coordinate free (0), at its lower bound (1) or at its upper bound (2).
  for (int face = 0; face < faces; ++face) {
    Vector s(n, 0.0);
    std::vector<size_t> free;
    for (int j = 0, code = face; j < static_cast<int>(n); ++j, code /= 3) {
      if (code % 3 == 0) free.push_back(j);
      if (code % 3 != 0) s[j] = code % 3 == 1 ? lo[j] : hi[j];
    }
    if (!free.empty()) {
      Vector r0 = r;  // the residuals with the fixed coordinates' part
      for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) r0[i] += jacobian[i][j] * s[j];
      Matrix a(free.size(), Vector(free.size(), 0.0)), rhs(free.size(), Vector(1, 0.0));
      for (size_t p = 0; p < free.size(); ++p) {
        for (size_t q = 0; q < free.size(); ++q)
          for (size_t i = 0; i < m; ++i) a[p][q] += jacobian[i][free[p]] * jacobian[i][free[q]];
        a[p][p] += ridge;
        for (size_t i = 0; i < m; ++i) rhs[p][0] -= jacobian[i][free[p]] * r0[i];
      }
      const std::optional<Matrix> sol = solve(a, rhs);
      if (!sol) continue;
      bool inside = true;
      for (size_t p = 0; p < free.size(); ++p) {
        const double v = (*sol)[p][0];
        const size_t j = free[p];
        const double slack = 1e-12 * (1 + hi[j] - lo[j]);
        inside = inside && v >= lo[j] - slack && v <= hi[j] + slack;
        s[j] = std::clamp(v, lo[j], hi[j]);
      }
      if (!inside) continue;
    }
    const double v = model_value(r, jacobian, s);
    if (v < best_value) {
      best_value = v;
      best = s;
    }
  }
  return best;
}

Vector singular_values(const Matrix& a) {
  const size_t n = a.empty() ? 0 : a[0].size();
  Matrix g(n, Vector(n, 0.0));  // A^T A, diagonalised by Jacobi rotations
  for (const auto& row : a)
    for (size_t p = 0; p < n; ++p)
      for (size_t q = 0; q < n; ++q) g[p][q] += row[p] * row[q];
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = 0, trace = 0;
    for (size_t p = 0; p < n; ++p) {
      trace += std::fabs(g[p][p]);
      for (size_t q = p + 1; q < n; ++q) off += g[p][q] * g[p][q];
    }
    if (off <= 1e-30 * trace * trace) break;
    for (size_t p = 0; p < n; ++p)
      for (size_t q = p + 1; q < n; ++q) {
        if (g[p][q] == 0) continue;
        const double theta = (g[q][q] - g[p][p]) / (2 * g[p][q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (size_t k = 0; k < n; ++k) {
          if (k == p || k == q) continue;
          const double gkp = g[k][p], gkq = g[k][q];
          g[k][p] = g[p][k] = c * gkp - s * gkq;
          g[k][q] = g[q][k] = s * gkp + c * gkq;
        }
        g[p][p] -= t * g[p][q];
        g[q][q] += t * g[p][q];
        g[p][q] = g[q][p] = 0;
      }
  }
  Vector sv;
  for (size_t p = 0; p < n; ++p) sv.push_back(std::sqrt(std::max(0.0, g[p][p])));
  std::sort(sv.begin(), sv.end(), std::greater<double>());
  return sv;
}

std::optional<PlaneFit> fit_plane(const Matrix& z, const Matrix& y) {
  const size_t k = z.size(), n = k ? z[0].size() : 0, m = k ? y[0].size() : 0;
  if (k < n + 1 || k == 0) return std::nullopt;
  Matrix a(n + 1, Vector(n + 1, 0.0)), b(n + 1, Vector(m, 0.0));  // normal equations in (1, z)
  for (size_t s = 0; s < k; ++s) {
    Vector x = {1};
    x.insert(x.end(), z[s].begin(), z[s].end());
    for (size_t p = 0; p <= n; ++p) {
      for (size_t q = 0; q <= n; ++q) a[p][q] += x[p] * x[q];
      for (size_t i = 0; i < m; ++i) b[p][i] += x[p] * y[s][i];
    }
  }
  const std::optional<Matrix> c = solve(a, b);
  if (!c) return std::nullopt;
  PlaneFit f;
  f.intercept = (*c)[0];
  f.slope.assign(m, Vector(n));
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) f.slope[i][j] = (*c)[j + 1][i];
  if (k > n + 1) {
    f.rms.assign(m, 0.0);
    for (size_t s = 0; s < k; ++s)
      for (size_t i = 0; i < m; ++i) {
        double e = y[s][i] - f.intercept[i];
        for (size_t j = 0; j < n; ++j) e -= f.slope[i][j] * z[s][j];
        f.rms[i] += e * e;
      }
    for (double& v : f.rms) v = std::sqrt(v / static_cast<double>(k - n - 1));
  }
  return f;
}

std::optional<Vector> least_squares_spread(const Matrix& jacobian, const Vector& sigma) {
  const size_t m = jacobian.size(), n = m ? jacobian[0].size() : 0;
  Matrix jtj(n, Vector(n, 0.0)), jt(n, Vector(m, 0.0));
  for (size_t p = 0; p < n; ++p)
    for (size_t i = 0; i < m; ++i) {
      jt[p][i] = jacobian[i][p];
      for (size_t q = 0; q < n; ++q) jtj[p][q] += jacobian[i][p] * jacobian[i][q];
    }
  const std::optional<Matrix> pinv = solve(jtj, jt);  // (J^T J)^-1 J^T: n rows of m
  if (!pinv) return std::nullopt;
  Vector out(n, 0.0);
  for (size_t j = 0; j < n; ++j) {
    for (size_t i = 0; i < m; ++i) out[j] += (*pinv)[j][i] * (*pinv)[j][i] * sigma[i] * sigma[i];
    out[j] = std::sqrt(out[j]);
  }
  return out;
}

}  // namespace sim::study
