# bench/growth.gp: insert rate as the table grows (comparison 4).
# gnuplot -e "in='out/growth.csv'; out='out/growth.png'; subtitle='...'" growth.gp
# growth.csv: rows_millions,bigserial,shardid,uuid,plpgsql (rows per ms)

if (!exists("subtitle")) subtitle = ""
set terminal pngcairo size 900,540 font "sans,11"
set output out
set datafile separator ","
set key right center box opaque
set grid ytics lc rgb "#dddddd"
set title "Bulk INSERT rate into a table with a primary key\n{/*0.8 ".subtitle."}"
set xlabel "rows in the table (millions)"
set ylabel "rows inserted per millisecond"
set yrange [0:*]
set xrange [0:*]
plot 1024 with lines dt 2 lw 1 lc rgb "#888888" title "1,024/ms: one sequence's ceiling", \
     in skip 1 using 1:2 with linespoints lw 2 pt 7 lc rgb "#1b9e77" title "bigserial", \
     in skip 1 using 1:3 with linespoints lw 2 pt 5 lc rgb "#d95f02" title "shardid\\_next", \
     in skip 1 using 1:4 with linespoints lw 2 pt 9 lc rgb "#7570b3" title "gen\\_random\\_uuid()"
