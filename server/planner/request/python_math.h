#ifndef CHUNKPLAN_SERVER_PLANNER_REQUEST_PYTHON_MATH_H_
#define CHUNKPLAN_SERVER_PLANNER_REQUEST_PYTHON_MATH_H_

// Python's arithmetic where the seed's answer depends on it bit for bit.

#include <cstdint>
#include <optional>

namespace chunkplan::planner {

// Python's `round(m * 1024**2)` for a finite double `m`: the product in
// double precision, then round half to even. Returns the exact integer value
// (as a double, which holds it exactly) so callers can range-check it; NaN or
// infinity in, the same out.
double PythonRoundMebi(double m);

// Python's `int(math.ceil(a / b))` for b >= 1 and a <= 2**63: the true
// division `a / b`
// correctly rounded to a double (as Python divides two ints), then its
// ceiling. For a < 2**53 this is the exact ceiling of a / b; above, the
// rounding of the quotient can move it either way.
uint64_t PythonCeilTrueDivide(uint64_t a, uint64_t b);

// The double nearest to a / b (ties to even), b >= 1: what Python's int / int
// gives.
double CorrectlyRoundedQuotient(uint64_t a, uint64_t b);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_REQUEST_PYTHON_MATH_H_
