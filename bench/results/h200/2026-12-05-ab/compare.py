import csv, glob, math, sys, collections
d, A, B, pat = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f'{d}/{A}-{pat}') + glob.glob(f'{d}/{B}-{pat}')):
    b = f.split('/')[-1].split('-')[0]
    for r in csv.DictReader(l for l in open(f) if not l.startswith('#')):
        if r['kernel'] != 'tcgemm': continue
        if r['status'] != 'ok': print('NOT OK', f, r['M'], r['N'], r['K'], r['status'])
        key = (int(r['M']), int(r['N']), int(r['K']), r['layout'])
        res[key][b].append(float(r['ratio'])); res[key][b+'ms'].append(float(r['median_ms']))
        res[key][b+'cfg'] = r['config'][:30]
logs = []; la=[]; lb=[]
print(f"{'shape':>20} {A+' ratio':>13} {B+' ratio':>13} {B}/{A} speed  cfg")
for key in sorted(res):
    a, b = res[key][A], res[key][B]
    if not a or not b: continue
    sp = (sum(res[key][A+'ms'])/len(a)) / (sum(res[key][B+'ms'])/len(b))
    logs.append(math.log(sp)); la += [math.log(x) for x in a]; lb += [math.log(x) for x in b]
    print(f"{'x'.join(map(str,key[:3])):>20} {' '.join(f'{x:.3f}' for x in a):>13} {' '.join(f'{x:.3f}' for x in b):>13} {sp:.3f}  {res[key][B+'cfg']}")
g = lambda l: math.exp(sum(l)/len(l))
print(f'n {len(logs)}: geomean speed {B}/{A} {g(logs):.4f}; geomean ratio vs cuBLAS {A} {g(la):.4f} {B} {g(lb):.4f}')
