"""The polynomial sets of specmath's float32 kernels, which compute in f32 arithmetic (specmath.NATIVE_F32): f32
coefficients, lowest degree first, the constant term a pair of f32 stored as their (exact) sum. Fitted by
scripts/fit_special_f32.py: least squares on Chebyshev nodes against mpmath, the coefficients rounded to f32 one at
a time from the highest and the rest refitted after each; in the comments, what each approximates and its max
error before f32 evaluation, in units of 2**-24 relative (to 1 + R for the *_excess sets R; absolute for erf_big). Also the two helpers the
f32 kernels need beyond mathlib_body.Body: `split` and `estrin`.
"""
import numpy as np

POLY = {
    # (u + 4) erfcx(u) below u = 4, in z = 2u/(u + 4) - 1/2 (specmath._erfcx_positive); 0.22
    'erfcx_low': (1.8727183492668544, -2.392788887023926, 2.389848232269287, -1.8967511653900146, 1.193598985671997, -0.5818233489990234, 0.2061203420162201, -0.0433349572122097, -0.0006298965308815241, 0.003435838967561722, -0.0006917797145433724),
    # the same above 4, in z = 8/(u + 4) - 1/2; 0.06
    'erfcx_high': (0.7496675366393664, 0.48613065481185913, 0.29752716422080994, 0.17089992761611938, 0.091454416513443, 0.045140668749809265, 0.02025764063000679, 0.00808578822761774, 0.002757773967459798, 0.0007203813293017447, 9.891857189359143e-05),
    # erf(x)/x - 1 in x**2, |x| <= 1; 0.04
    'erf_excess': (0.12837916726973986, -0.3761262893676758, 0.11283612251281738, -0.026854807510972023, 0.00519005348905921, -0.0008024353883229196, 7.898209878476337e-05),
    # erf(x) in x - 5/2, 1 <= x <= 4 (absolute); 0.17
    'erf_big': (0.9995930476949404, 0.002178183989599347, -0.005445688497275114, 0.008351770229637623, -0.008622604422271252, 0.006109109614044428, -0.002797554712742567, 0.0005603600875474513, 0.00025873014237731695, -0.00027061818400397897, 8.110046474030241e-05, 1.7760237824404612e-05, -1.571926986798644e-05, 4.985672035218158e-07, 8.90137130227231e-07),
    # erf_inv(y)/y - 1 in y**2, |y| <= 1/2; 0.02
    'erfinv_excess': (-0.11377307414210436, 0.23201347887516022, 0.12756946682929993, 0.08622142672538757, 0.06872240453958511, 0.03068595565855503, 0.09642231464385986),
    # erfcinv(q) in s - c, s = sqrt(-log q), pieces and centres c in ERFINV_PIECES; 0.32, 0.28, 0.22
    'erfinv_tail1': (0.9037825618887823, 1.0220506191253662, 0.05344560742378235, -0.05626910924911499, 0.039356473833322525, -0.021788492798805237, 0.009484538808465004, -0.0025707129389047623, -0.0011144989402964711, 0.0018076408887282014),
    'erfinv_tail2': (2.610531296389201, 1.0428414344787598, -0.00543981185182929, -9.538767335470766e-05, 0.00047881065984256566, -0.0002636192657519132, 0.0001007449536700733, -3.5232766094850376e-05, 1.9139326468575746e-05, -6.659865903202444e-06),
    'erfinv_tail3': (6.945862478952606, 1.0154739618301392, -0.0015046200715005398, 0.00014964170986786485, -1.453499589842977e-05, 1.3106476899338304e-06, -1.2265834925528907e-07, 1.0867277744353032e-08, 2.0512287424168107e-09, -6.058762380689586e-10),
    # sqrt(2) erf_inv(y)/y - 1; 0.04
    'ndtri_excess': (0.2533141389553981, 0.32811659574508667, 0.1804104745388031, 0.12193550914525986, 0.09718815982341766, 0.043396491557359695, 0.1363617479801178),
    # sqrt(2) erfcinv(q), as erfinv_tail; 0.33, 0.43, 0.34
    'ndtri_tail1': (1.2781415332224562, 1.4453977346420288, 0.07558350265026093, -0.0795765370130539, 0.055658455938100815, -0.030813582241535187, 0.01341316383332014, -0.003635537112131715, -0.0015761395916342735, 0.0025563903618603945),
    'ndtri_tail2': (3.6918487458340064, 1.47480046749115, -0.007693056017160416, -0.00013489856792148203, 0.0006771405460312963, -0.00037281392724253237, 0.00014247487706597894, -4.9826652684714645e-05, 2.7067095288657583e-05, -9.41847338253865e-06),
    'ndtri_tail3': (9.822932888114849, 1.4360970258712769, -0.0021278541535139084, 0.00021162533084861934, -2.0555587980197743e-05, 1.8535358776716748e-06, -1.73465110719917e-07, 1.536864679962946e-08, 2.9008755397796904e-09, -8.568382114937378e-10),
}

# erfcinv's pieces of s = sqrt(-log q): (end, centre); q >= 2**-24 for erf_inv (s <= 4.08), down to the least f32
# for ndtri (s <= 10.2)
ERFINV_PIECES = ((1.7, 1.266277305578849), (4.1, 2.9), (float("inf"), 7.125))

# evaluated by Estrin's scheme (`estrin`; the others by Horner's, the more accurate in f32): its terms are small next to the constant, so the order
# of the sums costs no accuracy there (in erfcx's sets it costs a fifth of an ulp)
ESTRIN = ("erf_big",)


def split(f, hi, lo):
    """hi + lo (a double-double) as a pair in f's arithmetic: f32 halves in f32, the pair itself otherwise."""
    if f.ty == "double":
        return hi, lo
    h = float(np.float32(hi))
    return h, float(np.float32((hi - h) + lo))


def estrin(f, z, coefs):
    """The polynomial by Estrin's scheme: a quarter of Horner's latency, which a chain of calls (erf(erf(x) ...))
    waits on."""
    terms, power = list(coefs), z
    while len(terms) > 1:
        paired = [f.fma(terms[i + 1], power, terms[i]) for i in range(0, len(terms) - 1, 2)]
        terms = paired + terms[len(paired) * 2:]
        if len(terms) > 1:
            power = f.mul(power, power)
    return terms[0]
