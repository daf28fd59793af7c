// Dense linear algebra for the handful of unknowns of the calibration search (fit_search.h): 1 to 3
// parameters, a few measurements. Matrices are vectors of rows. Pure.
#pragma once

#include <optional>
#include <vector>

namespace sim::study {

using Vector = std::vector<double>;
using Matrix = std::vector<Vector>;  // rows

// v scaled to length 1 (all zeros when v is zero).
Vector unit_vector(Vector v);

// Solves A X = B (A: k x k, B: k rows of any width) by Gaussian elimination with partial pivoting; nullopt
// when A is singular to working precision.
std::optional<Matrix> solve(Matrix a, Matrix b);

// |det| of the n <= 3 directions (rows of n values), each scaled to unit length: 1 when they are
// orthogonal, 0 when they are dependent (or one is zero).
double poise(const Matrix& directions);

// |r + J s|^2 (J: r.size() rows of s.size()): the linear model's sum of squares at step s.
double model_value(const Vector& r, const Matrix& jacobian, const Vector& s);

// The minimiser of |r + J s|^2 over lo <= s <= hi (J: m rows of n <= 3; lo <= 0 <= hi), exact: every face of
// the box is tried. A rank-deficient J gets the smallest step (a tiny ridge term).
Vector box_least_squares(const Vector& r, const Matrix& jacobian, const Vector& lo, const Vector& hi);

// The singular values of a matrix of m rows of n <= 3 columns, largest first.
Vector singular_values(const Matrix& a);

// The least-squares plane y = c + G z through samples z_k (n values each) and y_k (m values each).
struct PlaneFit {
  Vector intercept;  // c: m values
  Matrix slope;      // G: m rows of n
  Vector rms;        // per y column, the rms distance of the samples from the plane over k - n - 1 degrees of
                     // freedom; empty when there are only n + 1 samples
};
// nullopt when the samples do not determine the plane (fewer than n + 1, or all on a line or plane of z).
std::optional<PlaneFit> fit_plane(const Matrix& z, const Matrix& y);

// The least-squares solution's spread: with J (m rows of n, full column rank) and independent errors of
// standard deviation sigma_i on each of the m values, the standard deviation of each of the n unknowns of
// min |J x - v|^2. nullopt when J has not full column rank.
std::optional<Vector> least_squares_spread(const Matrix& jacobian, const Vector& sigma);

}  // namespace sim::study
