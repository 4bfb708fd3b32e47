#pragma once
// Welch's two-sample t-test (unequal variances), for the claim verdicts of `normlab reproduce` and
// `normlab report`: is the difference of two cells' means over seeds larger than their seed noise?
#include <vector>

namespace nlapp {

/// Sample standard deviation (n − 1 in the denominator); 0 for fewer than two values.
double sample_std(const std::vector<double>& v);

/// The outcome of welch_t_test.
struct WelchResult {
  double diff = 0;  ///< mean(a) − mean(b)
  double t = 0;     ///< diff / sqrt(s_a²/n_a + s_b²/n_b)
  double df = 0;    ///< Welch–Satterthwaite degrees of freedom
  double p = 1;     ///< two-sided p-value
};

/// Welch's t-test of mean(a) = mean(b) (Welch 1947; t and the Welch–Satterthwaite df as in
/// scipy.stats.ttest_ind(equal_var=False)). Needs at least two values on each side (throws
/// std::invalid_argument otherwise). When both samples have zero variance, p = 0 if the means differ and
/// 1 if they are equal (t = ±inf or 0, df = n_a + n_b − 2).
WelchResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b);

/// P(|T| >= |t|) for Student's t with `df` > 0 degrees of freedom: I_{df/(df+t²)}(df/2, 1/2), the
/// regularised incomplete beta function (continued fraction, modified Lentz; Numerical Recipes §6.4).
double student_t_two_sided_p(double t, double df);

}  // namespace nlapp
